"""Email events reach a real receiver: sent, delivered, bounced (issue 4 acceptance), verified three ways."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from tests.conftest import AUTH, make_settings
from tests.webhooks_helpers import Receiver, advance, create_hook, verify_all

OUTBOUND_KEYS = {"email_id", "created_at", "from", "to", "subject"}
BOUNCE_KEYS = {"diagnosticCode", "message", "subType", "type"}



@pytest.fixture
def live(receiver: Receiver) -> Iterator[TestClient]:
    """Frozen at the real time: the verifiers compare `svix-timestamp` with the wall clock."""
    settings = make_settings(clock_start=datetime.now(UTC).replace(microsecond=0))
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as test_client:
        yield test_client


def send(client: TestClient, to: str, **extra: Any) -> str:
    response = client.post("/emails", json={
        "from": "Acme <onboarding@resend.dev>", "to": [to], "subject": "Welcome", "html": "<p>Hi</p>",
        **extra})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def settle(client: TestClient) -> None:
    """Let the simulated delivery outcome fall due (a few seconds on the clock) and deliver it."""
    assert client.post("/_emulator/webhooks/flush").status_code == 200
    advance(client, seconds=10)


def test_sent_and_delivered_reach_the_receiver_signed(live: TestClient, receiver: Receiver) -> None:
    hook = create_hook(live, receiver.url, ["email.sent", "email.delivered", "email.bounced"])
    email_id = send(live, "delivered@resend.dev", tags=[{"name": "campaign", "value": "may"}])
    settle(live)
    assert receiver.types() == ["email.sent", "email.delivered"]
    for got in receiver.received:
        assert verify_all(hook["signing_secret"], got)[1:] == [got.json, got.json]
        assert list(got.json) == ["type", "created_at", "data"]
        data = got.json["data"]
        assert set(data) >= OUTBOUND_KEYS and data["email_id"] == email_id
        assert data["from"] == "Acme <onboarding@resend.dev>" and data["to"] == ["delivered@resend.dev"]
        assert data["subject"] == "Welcome" and data["tags"] == {"campaign": "may"}
        assert data["created_at"].endswith("Z") and "T" in data["created_at"]
    sent, delivered = receiver.received
    assert sent.headers["svix-id"] != delivered.headers["svix-id"]
    listed = live.get(f"/webhooks/{hook['id']}/events").json()["data"]
    assert [(e["type"], e["status"]) for e in listed] == [("email.delivered", "success"),
                                                          ("email.sent", "success")]


def test_bounced_carries_the_bounce_object(live: TestClient, receiver: Receiver) -> None:
    hook = create_hook(live, receiver.url, ["email.bounced", "email.delivered"])
    email_id = send(live, "bounced@resend.dev")
    settle(live)
    [got] = receiver.received
    verify_all(hook["signing_secret"], got)
    assert got.json["type"] == "email.bounced"
    data = got.json["data"]
    assert data["email_id"] == email_id and data["to"] == ["bounced@resend.dev"]
    assert set(data["bounce"]) == BOUNCE_KEYS
    assert data["bounce"]["type"] in ("Undetermined", "Transient", "Permanent")
    assert data["bounce"]["subType"] in ("Undetermined", "General", "NoEmail", "MailboxFull",
                                         "MessageTooLarge", "ContentRejected", "AttachmentRejected")
    assert all(isinstance(code, str) for code in data["bounce"]["diagnosticCode"])


def test_a_failed_request_emits_nothing(live: TestClient, receiver: Receiver) -> None:
    create_hook(live, receiver.url, ["email.sent"])
    response = live.post("/emails", json={"from": "onboarding@resend.dev", "to": ["delivered@resend.dev"]})
    assert response.status_code == 422
    settle(live)
    assert receiver.received == []


def test_other_accounts_events_are_not_delivered(receiver: Receiver) -> None:
    settings = make_settings(isolate_keys=True)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        mine, theirs = {"Authorization": "Bearer re_mine_1"}, {"Authorization": "Bearer re_theirs_1"}
        assert client.post("/webhooks", headers=mine, json={
            "endpoint": receiver.url, "events": ["domain.created"]}).status_code == 201
        assert client.post("/domains", headers=theirs, json={"name": "example.com"}).status_code == 201
        assert client.post("/domains", headers=mine, json={"name": "example.org"}).status_code == 201
        assert client.post("/_emulator/webhooks/flush").status_code == 200
    assert [r.json["data"]["name"] for r in receiver.received] == ["example.org"]
