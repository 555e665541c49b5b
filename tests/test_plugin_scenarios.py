"""Seed scenarios (fixtures/*.json): at start with --seed-file, per test through /_emulator/scenario."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.control.scenarios import FIXTURES
from emulator.core.accounts import isolated_account_id
from emulator.core.clock import parse_iso
from tests.conftest import AUTH, api_client, make_settings

SENDING_KEY = {"Authorization": "Bearer re_scenario_sending_key"}


def load(client: TestClient, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    response = client.post("/_emulator/scenario", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_seed_file_at_start_gives_a_ready_account() -> None:
    with api_client(make_settings(seed_file=str(FIXTURES / "basic.json"), strict_domains=True)) as client:
        domains = client.get("/domains").json()["data"]
        assert [(d["name"], d["status"]) for d in domains] == [("acme.dev", "verified")]
        assert client.get("/templates/welcome").json()["status"] == "published"
        hook = client.get("/webhooks").json()["data"][0]
        assert hook["status"] == "disabled"
        secret = client.get(f"/webhooks/{hook['id']}").json()["signing_secret"]
        assert secret == "whsec_c2NlbmFyaW8tc2lnbmluZy1zZWNyZXQtMDAx"
        sent = client.post("/emails", headers=SENDING_KEY, json={
            "from": "hello@acme.dev", "to": ["grace@hopper.dev"],
            "template": {"id": "welcome", "variables": {"NAME": "Grace"}}})
        assert sent.status_code == 200, sent.text
        elsewhere = client.post("/emails", headers=SENDING_KEY, json={
            "from": "hello@other.dev", "to": ["grace@hopper.dev"], "subject": "s", "text": "t"})
        assert elsewhere.status_code == 403
        assert client.get("/domains", headers=SENDING_KEY).json()["name"] == "restricted_api_key"


def test_a_broken_seed_file_stops_the_start_with_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"broadcasts": [{"name": "March"}]}')
    run = subprocess.run([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--seed-file",
                          str(broken)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode != 0
    assert (f"--scenario {broken}: Scenario kind `broadcasts` is not supported by this emulator build yet"
            in run.stderr)
    assert "Traceback" not in run.stderr


def test_a_seed_the_services_refuse_stops_the_start(tmp_path: Path) -> None:
    refused = tmp_path / "refused.json"
    refused.write_text('{"templates": [{"name": "no html"}]}')
    run = subprocess.run([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--seed-file",
                          str(refused)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode != 0
    assert "Missing `html` field." in run.stderr


def test_scenario_route_returns_what_it_made(client: TestClient) -> None:
    made = load(client, {"scenario": {
        "domains": [{"name": "shop.dev", "status": "not_started"}],
        "api_keys": [{"name": "generated"}],
        "emails": [{"from": "a@shop.dev", "to": ["b@shop.dev"], "subject": "Seeded", "text": "t"}],
    }})
    loaded = made["loaded"]
    assert made["account"] == "default"
    assert [d["name"] for d in loaded["domains"]] == ["shop.dev"]
    assert loaded["api_keys"][0]["token"].startswith("re_")
    assert client.get(f"/emails/{loaded['emails'][0]['id']}").json()["subject"] == "Seeded"
    assert client.get("/domains").json()["data"][0]["status"] == "not_started"


def test_scenario_by_bundled_name_and_by_path(client: TestClient) -> None:
    load(client, {"name": "basic"})
    assert client.get("/templates/welcome").status_code == 200
    client.post("/_emulator/reset")
    load(client, {"path": str(FIXTURES / "basic.json")})
    assert len(client.get("/domains").json()["data"]) == 1


def test_isolation_mode_loads_into_the_callers_account() -> None:
    with api_client(make_settings(isolate_keys=True)) as client:
        made = load(client, {"name": "basic"}, Authorization="Bearer re_tenant_one")
        assert made["account"] == isolated_account_id(0, "re_tenant_one")
        assert made["account_label"] == "re_…_one"
        tenant = {"Authorization": "Bearer re_tenant_one"}
        assert len(client.get("/domains", headers=tenant).json()["data"]) == 1
        assert client.get("/domains", headers=AUTH).json()["data"] == []


@pytest.mark.parametrize(("body", "complaint"), [
    ({}, "Give a bundled scenario"),
    ({"name": "nope"}, "No scenario `nope` (bundled: basic, demo, empty)"),
    ({"scenario": {"broadcasts": []}}, "`broadcasts` is not supported by this emulator build yet"),
    ({"scenario": {"gadgets": []}}, "Unknown scenario kind `gadgets`"),
    ({"scenario": {"domains": {"name": "x.dev"}}}, "must be a list of objects"),
    ({"scenario": {"domains": [{"name": "x.dev", "status": "glowing"}]}}, "`status` must be"),
    ({"scenario": {"api_keys": [{"name": "k", "token": "sk_live"}]}}, "must start with `re_`"),
    ({"scenario": {"api_keys": [{"name": "k", "domain": "ghost.dev"}]}}, "no domain `ghost.dev`"),
    ({"scenario": {"demo": {"days": 99}}}, "`demo.days` must be"),
])
def test_bad_scenarios_are_refused_with_422(client: TestClient, body: dict[str, Any], complaint: str) -> None:
    response = client.post("/_emulator/scenario", json=body)
    assert response.status_code == 422
    assert complaint in response.json()["message"]


def test_a_refused_scenario_leaves_nothing_behind(client: TestClient) -> None:
    scenario = {"domains": [{"name": "half.dev"}], "templates": [{"name": "no html"}]}
    assert client.post("/_emulator/scenario", json={"scenario": scenario}).status_code == 422
    assert client.get("/domains").json()["data"] == []


def test_demo_is_a_week_of_varied_mail(client: TestClient) -> None:
    clock_before = client.get("/_emulator/clock").json()
    made = load(client, {"name": "demo"})
    assert made["loaded"]["demo"][0]["emails"] == 60
    assert client.get("/_emulator/clock").json() == clock_before
    emails = client.get("/_emulator/outbox", params={"limit": 100}).json()["data"]
    assert len(emails) == 60
    times = sorted(parse_iso(email["created_at"].replace(" ", "T")) for email in emails)
    assert (times[-1] - times[0]).days >= 6
    statuses = Counter(email["last_event"] for email in emails)
    assert statuses["delivered"] > 30
    assert statuses["bounced"] + statuses["complained"] >= 2
    assert statuses["scheduled"] == 1


def test_demo_is_the_same_for_the_same_seed() -> None:
    def ids() -> list[str]:
        with api_client(make_settings()) as client:
            load(client, {"scenario": {"demo": {"emails": 10}}})
            return [email["id"] for email in client.get("/emails").json()["data"]]

    assert ids() == ids()

