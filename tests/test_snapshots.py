"""Snapshots: save the whole state to a file, change things, restore, and get exactly the old state back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.cli import parse_settings
from emulator.testing import EmulatorServer
from emulator.testing.receiver import WebhookReceiver
from tests.conftest import AUTH, api_client, flush, make_settings

LISTS = ["/emails", "/domains", "/api-keys", "/templates", "/webhooks"]


def mail(to: str) -> dict[str, Any]:
    return {"from": "Acme <hello@acme.dev>", "to": [to], "subject": f"For {to}", "html": "<p>Hi</p>",
            "tags": [{"name": "kind", "value": "test"}]}


def build_state(client: TestClient) -> None:
    assert client.post("/domains", json={"name": "acme.dev"}).status_code == 201
    assert client.post("/api-keys", json={"name": "ci"}).status_code == 201
    template = {"name": "Welcome", "alias": "welcome", "html": "<p>Hi {{{NAME}}}</p>",
                "variables": [{"key": "NAME", "type": "string"}]}
    assert client.post("/templates", json=template).status_code == 201
    for index in range(3):
        assert client.post("/emails", json=mail(f"user{index}@acme.dev")).status_code == 200
    flush(client)


def lists(client: TestClient) -> dict[str, bytes]:
    return {path: client.get(path).content for path in LISTS}


def save(client: TestClient, path: Path) -> dict[str, Any]:
    response = client.post("/_emulator/snapshot/save", json={"path": str(path)})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def restore(client: TestClient, path: Path) -> None:
    response = client.post("/_emulator/snapshot/restore", json={"path": str(path)})
    assert response.status_code == 200, response.text


def test_restore_gives_byte_identical_lists(client: TestClient, tmp_path: Path) -> None:
    build_state(client)
    before = lists(client)
    save(client, tmp_path / "state.db")
    for index in range(5):
        client.post("/emails", json=mail(f"later{index}@acme.dev"))
    domain_id = client.get("/domains").json()["data"][0]["id"]
    client.delete(f"/domains/{domain_id}")
    client.post("/webhooks", json={"endpoint": "https://hooks.acme.dev/r", "events": ["email.sent"]})
    client.post("/templates", json={"name": "Other", "html": "<p>x</p>"})
    assert lists(client) != before
    restore(client, tmp_path / "state.db")
    assert lists(client) == before


def test_restore_continues_the_id_sequence_of_the_snapshot(client: TestClient, tmp_path: Path) -> None:
    build_state(client)
    save(client, tmp_path / "state.db")
    first = client.post("/emails", json=mail("next@acme.dev")).json()["id"]
    client.post("/emails", json=mail("more@acme.dev"))
    restore(client, tmp_path / "state.db")
    assert client.post("/emails", json=mail("next@acme.dev")).json()["id"] == first


def test_restore_brings_back_the_clock(client: TestClient, tmp_path: Path) -> None:
    saved_at = client.get("/_emulator/clock").json()
    save(client, tmp_path / "state.db")
    client.post("/_emulator/clock/advance", json={"days": 3})
    restore(client, tmp_path / "state.db")
    assert client.get("/_emulator/clock").json() == saved_at


def test_restore_reloads_the_key_ring(client: TestClient, tmp_path: Path) -> None:
    save(client, tmp_path / "state.db")
    token = client.post("/api-keys", json={"name": "made later"}).json()["token"]
    own_key = client.get("/api-keys").json()["data"][-1]["id"]
    assert client.get("/domains", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    client.delete(f"/api-keys/{own_key}")
    assert client.get("/domains").status_code == 403
    restore(client, tmp_path / "state.db")
    assert client.get("/domains").status_code == 200
    assert client.get("/domains", headers={"Authorization": f"Bearer {token}"}).status_code == 403


def test_restore_clears_fault_rules(client: TestClient, tmp_path: Path) -> None:
    save(client, tmp_path / "state.db")
    client.post("/_emulator/faults", json={"path": "/domains", "error": "application_error"})
    restore(client, tmp_path / "state.db")
    assert client.get("/domains").status_code == 200


def test_pending_deliveries_follow_the_snapshot(client: TestClient, tmp_path: Path) -> None:
    email_id = client.post("/emails", json=mail("delivered@resend.dev")).json()["id"]
    save(client, tmp_path / "state.db")  # `sent`; the delivery outcome is still a job
    client.post("/_emulator/clock/advance", json={"seconds": 5})
    assert client.get(f"/emails/{email_id}").json()["last_event"] == "delivered"
    restore(client, tmp_path / "state.db")
    assert client.get(f"/emails/{email_id}").json()["last_event"] == "sent"
    client.post("/_emulator/clock/advance", json={"seconds": 5})
    assert client.get(f"/emails/{email_id}").json()["last_event"] == "delivered"


def test_restore_at_start_with_the_restore_setting(client: TestClient, tmp_path: Path) -> None:
    build_state(client)
    before = lists(client)
    save(client, tmp_path / "state.db")
    with api_client(make_settings(restore=str(tmp_path / "state.db"))) as fresh:
        assert lists(fresh) == before


def test_cli_flag_sets_the_restore_path() -> None:
    assert parse_settings(["--restore", "/tmp/state.db"]).restore == "/tmp/state.db"


def test_save_reports_the_file_and_replaces_an_old_one(client: TestClient, tmp_path: Path) -> None:
    target = tmp_path / "state.db"
    save(client, target)
    client.post("/domains", json={"name": "later.dev"})
    report = save(client, target)
    assert report == {"path": str(target), "bytes": target.stat().st_size}
    assert target.read_bytes().startswith(b"SQLite format 3")


@pytest.mark.parametrize(("body", "complaint"), [
    ({}, "`path` must be"),
    ({"path": "/no/such/dir/state.db"}, "Cannot write a snapshot to `/no/such/dir/state.db`"),
])
def test_bad_save_requests(client: TestClient, body: dict[str, Any], complaint: str) -> None:
    response = client.post("/_emulator/snapshot/save", json=body)
    assert response.status_code == 422
    assert complaint in response.json()["message"]


def test_restore_refuses_missing_and_foreign_files(client: TestClient, tmp_path: Path) -> None:
    missing = client.post("/_emulator/snapshot/restore", json={"path": str(tmp_path / "nope.db")})
    assert (missing.status_code, missing.json()["message"]) == (
        422, f"No emulator snapshot at `{tmp_path}/nope.db`.")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    refused = client.post("/_emulator/snapshot/restore", json={"path": str(junk)})
    assert refused.status_code == 422
    assert refused.json()["message"] == f"No emulator snapshot at `{junk}`."
    assert client.get("/domains", headers=AUTH).status_code == 200


def test_reset_while_webhook_deliveries_are_in_flight() -> None:
    """The plugin's per-test reset must not trip over a delivery the reset cancels mid-call."""
    with WebhookReceiver() as receiver, EmulatorServer(smtp=False) as server:
        server.webhooks.register(receiver.url)
        server.mark_baseline()
        for _ in range(30):
            server.request("POST", "/emails", mail("delivered@resend.dev"))
            server.reset()
        assert server.request("GET", "/emails")["data"] == []
