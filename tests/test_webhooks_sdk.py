"""The official `resend` SDK against a real emulator process: every Webhooks method, and its verify helper
on a delivery the process made to a real receiver."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
import resend

from tests.conftest import running_cli
from tests.webhooks_helpers import Receiver, verify_resend


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    start = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with running_cli("--api-key", "re_test_123", "--clock", "frozen", "--clock-start", start) as url:
        yield url


@pytest.fixture
def sdk(server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    httpx.post(f"{server_url}/_emulator/reset")
    monkeypatch.setattr(resend, "api_url", server_url)
    monkeypatch.setattr(resend, "api_key", "re_test_123")
    yield server_url



def test_webhook_methods_and_verify(sdk: str, receiver: Receiver) -> None:
    created = resend.Webhooks.create({"endpoint": receiver.url, "events": ["email.sent"]})
    hook_id, secret = created["id"], created["signing_secret"]
    assert resend.Webhooks.get(hook_id)["endpoint"] == receiver.url
    assert [w["id"] for w in resend.Webhooks.list()["data"]] == [hook_id]

    sent = resend.Emails.send({"from": "onboarding@resend.dev", "to": ["delivered@resend.dev"],
                               "subject": "Hello", "html": "<p>Hi</p>"})
    assert httpx.post(f"{sdk}/_emulator/webhooks/flush").status_code == 200
    [got] = receiver.received
    event = verify_resend(secret, got)
    assert event["type"] == "email.sent" and event["data"]["email_id"] == sent["id"]

    [listed] = resend.Webhooks.list_events(hook_id)["data"]
    assert listed["id"] == got.headers["svix-id"] and listed["status"] == "success"
    detail = resend.Webhooks.get_event(hook_id, listed["id"])
    # The retrieve-event docs show the documented data, without the delivery's `message_id`.
    assert "message_id" in event["data"]
    del event["data"]["message_id"]
    assert detail["payload"] == event
    assert resend.Webhooks.replay_event(hook_id, listed["id"])["id"] == listed["id"]
    httpx.post(f"{sdk}/_emulator/webhooks/flush")
    attempts = resend.Webhooks.list_event_attempts(hook_id, listed["id"], {"limit": 1})
    assert attempts["has_more"] is True and attempts["data"][0]["http_status_code"] == 200

    rotated = resend.Webhooks.rotate_signing_secret(hook_id)
    assert rotated["signing_secret"] != secret
    updated = resend.Webhooks.update({"webhook_id": hook_id, "status": "disabled"})
    assert updated["id"] == hook_id and resend.Webhooks.get(hook_id)["status"] == "disabled"
    assert resend.Webhooks.remove(hook_id)["deleted"] is True
    with pytest.raises(resend.exceptions.ResendError) as raised:
        resend.Webhooks.get(hook_id)
    assert raised.value.code == 404
