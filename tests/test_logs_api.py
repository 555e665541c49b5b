"""The Logs API: requests read back newest first, bodies as sent with every secret redacted."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tests.conftest import KEY, make_settings

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["lin@example.org"], "subject": "Hi", "html": "<p>Hi</p>"}


def test_requests_are_listed_newest_first_and_read_back_whole(client: TestClient) -> None:
    sent = client.post("/emails", json=MAIL, headers={"user-agent": "resend-python:2.5.0"})
    client.get("/domains/3f1c2b8e-0000-4000-8000-000000000000")
    listed = client.get("/logs").json()
    assert [(item["method"], item["endpoint"], item["response_status"]) for item in listed["data"]] == [
        ("GET", "/domains/3f1c2b8e-0000-4000-8000-000000000000", 404), ("POST", "/emails", 200)]
    post = listed["data"][1]
    assert post["user_agent"] == "resend-python:2.5.0"
    assert client.get(f"/logs/{post['id']}").json() == {
        "object": "log", **post, "request_body": MAIL, "response_body": {"id": sent.json()["id"]}}
    assert post["created_at"] == "2026-05-14 09:00:00.000+00"


async def _stored_bodies(emu: Any) -> str:
    async with emu.transaction("default") as tx:
        tx.include_deferred()
        rows = await tx.all("SELECT request_body, response_body FROM request_logs")
    return repr([(row["request_body"], row["response_body"]) for row in rows])


def test_no_secret_reaches_a_stored_body(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "ci"}).json()
    hook = client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/h",
                                          "events": ["email.sent"]}).json()
    client.get(f"/webhooks/{hook['id']}")
    rotated = client.post(f"/webhooks/{hook['id']}/signing-secret/rotate").json()["signing_secret"]
    logs = [client.get(f"/logs/{item['id']}").json() for item in client.get("/logs").json()["data"]]
    stored = repr(logs)
    for secret in (created["token"], hook["signing_secret"], rotated, KEY):
        assert secret not in stored
    # The stored rows themselves, not only the API's view of them.
    dump = client.portal.call(_stored_bodies, client.app.state.emu)  # type: ignore[attr-defined]
    assert "[redacted]" in dump
    for secret in (created["token"], hook["signing_secret"], rotated, KEY):
        assert secret not in dump
    key_log = next(log for log in logs if log["endpoint"] == "/api-keys")
    assert key_log["response_body"] == {**created, "token": "[redacted]"}


@pytest.mark.parametrize("settings", [make_settings(isolate_keys=True)])
def test_logs_belong_to_the_account_that_made_them(client: TestClient) -> None:
    client.post("/emails", json=MAIL)
    other = {"Authorization": "Bearer re_someone_else_0001"}
    client.get("/domains", headers=other)
    listed = client.get("/logs", headers=other).json()["data"]
    assert [item["endpoint"] for item in listed] == ["/domains"]
    mine = client.get("/logs").json()["data"]
    assert [item["endpoint"] for item in mine] == ["/emails"]
    refused = client.get(f"/logs/{mine[0]['id']}", headers=other)
    assert (refused.status_code, refused.json()["name"]) == (404, "not_found")


def test_pages_walk_newest_to_oldest_and_back_with_the_seed_rules(client: TestClient) -> None:
    for n in range(5):
        client.get(f"/domains/3f1c2b8e-0000-4000-8000-00000000000{n}")
    every = client.get("/logs").json()
    assert every["has_more"] is False
    endpoints = [item["endpoint"][-1] for item in every["data"]]
    assert endpoints == ["4", "3", "2", "1", "0"]  # newest first; the /logs reads are not logged yet
    ids = [item["id"] for item in every["data"]]
    first = client.get("/logs?limit=3").json()  # the read above is a request too: now the newest
    assert first["data"][0]["endpoint"] == "/logs"
    assert ([item["id"] for item in first["data"]][1:], first["has_more"]) == (ids[:2], True)
    second = client.get(f"/logs?limit=2&after={ids[1]}").json()
    assert ([item["id"] for item in second["data"]], second["has_more"]) == (ids[2:4], True)
    last = client.get(f"/logs?limit=2&after={ids[3]}").json()
    assert ([item["id"] for item in last["data"]], last["has_more"]) == (ids[4:], False)
    back = client.get(f"/logs?limit=2&before={ids[4]}").json()
    assert ([item["id"] for item in back["data"]], back["has_more"]) == (ids[2:4], True)


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=ten", "after=nope",
                                   "after=3f1c2b8e-0000-4000-8000-000000000000",
                                   "after={id}&before={id}"])
def test_pagination_refusals_are_422_validation_error(client: TestClient, query: str) -> None:
    client.get("/domains")
    log_id = client.get("/logs").json()["data"][0]["id"]
    response = client.get(f"/logs?{query.format(id=log_id)}")
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_unknown_or_malformed_ids(client: TestClient) -> None:
    malformed = client.get("/logs/not-a-uuid").json()
    assert malformed == {"statusCode": 422, "message": "The `log_id` must be a valid UUID.",
                         "name": "invalid_parameter"}
    missing = client.get("/logs/3f1c2b8e-0000-4000-8000-000000000000")
    assert (missing.status_code, missing.json()) == (404, {"statusCode": 404, "message": "Log not found",
                                                           "name": "not_found"})


def test_the_list_is_always_paginated_twenty_by_default(client: TestClient) -> None:
    for _ in range(25):
        client.get("/domains")
    listed = client.get("/logs").json()
    assert (len(listed["data"]), listed["has_more"]) == (20, True)


def test_logs_waiting_for_a_later_commit_are_read_and_survive_a_restart(tmp_path: Any,
                                                                        monkeypatch: Any) -> None:
    """Log rows ride with later commits in batches (core/db.py DEFER_ROWS): every read sees them at
    once, and stopping the emulator writes what still waits."""
    from tests.conftest import api_client

    monkeypatch.setattr("emulator.core.db.DEFER_SECONDS", 60.0)  # a slow machine must not flush early
    path = str(tmp_path / "state.db")
    with api_client(make_settings(db=path)) as first:
        ids = [first.post("/emails", json=MAIL).json()["id"] for _ in range(3)]
        with sqlite3.connect(path) as raw:  # another reader: the batch is not written yet
            assert raw.execute("SELECT count(*) FROM request_logs").fetchone() == (0,)
        listed = first.get("/logs").json()["data"]
        assert [item["response_status"] for item in listed] == [200, 200, 200]
        first.post("/emails", json=MAIL)
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM request_logs").fetchone() == (5,)
        assert raw.execute("SELECT count(*) FROM emails").fetchone() == (4,)
    with api_client(make_settings(db=path)) as second:
        endpoints = [(item["method"], item["endpoint"]) for item in second.get("/logs").json()["data"]]
        assert endpoints == [("POST", "/emails"), ("GET", "/logs"), *[("POST", "/emails")] * 3]
        assert second.get(f"/emails/{ids[0]}").status_code == 200


def test_each_answer_over_http_is_in_the_log_when_the_client_reads_it(live_server: Any) -> None:
    """The log row is queued once the answer is on its way (issue 40): a client that reads the log as soon
    as each answer arrives, on the same keep-alive connection, finds it there, failures included."""
    with httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {KEY}"}) as api:
        assert api.post("/_emulator/reset").status_code == 200
        for body, status in ((MAIL, 200), ({**MAIL, "to": []}, 422), (MAIL, 200)):
            answer = api.post("/emails", json=body)
            assert answer.status_code == status
            newest = api.get("/logs", params={"limit": 1}).json()["data"][0]
            logged = api.get(f"/logs/{newest['id']}").json()
            assert (logged["endpoint"], logged["response_status"]) == ("/emails", status)
            assert (logged["request_body"], logged["response_body"]) == (body, answer.json())
