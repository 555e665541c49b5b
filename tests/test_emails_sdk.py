"""Every method of the official Python SDK's Emails, Emails.Attachments and Batch (sync and async)
against a real uvicorn server on 127.0.0.1 with a frozen clock."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest
import resend

from emulator.testing import EmulatorServer
from tests.conftest import FROZEN_AT, KEY
from tests.emails_helpers import PNG, SENDER, email
from tests.templates_helpers import plain

FIRST_ID = "9a84b94b-9411-4aaa-8ee5-92d72a81082f"


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(api_keys=[KEY], clock="frozen", clock_start=FROZEN_AT, smtp=False, seed=0) as running:
        yield running


@pytest.fixture
def sdk(server: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    server.reset()
    monkeypatch.setattr(resend, "api_url", server.url)
    monkeypatch.setattr(resend, "api_key", KEY)
    return server


def params(**overrides: Any) -> Any:
    return email(**overrides)


def test_send_get_list(sdk: EmulatorServer) -> None:
    tags = [{"name": "category", "value": "receipt"}]
    sent = resend.Emails.send(params(reply_to="support@acme.dev", tags=tags), {"idempotency_key": "first"})
    assert plain(sent) == {"id": FIRST_ID}
    assert plain(resend.Emails.get(FIRST_ID)) == {
        "object": "email", "id": FIRST_ID, "message_id": f"<{FIRST_ID}@mail.acme.dev>",
        "to": ["delivered@resend.dev"], "from": SENDER, "created_at": "2026-05-14 09:00:00+00",
        "subject": "Your receipt", "html": "<p>Thanks for your order #1042.</p>",
        "text": "Thanks for your order #1042.", "bcc": None, "cc": None, "reply_to": ["support@acme.dev"],
        "last_event": "sent", "scheduled_at": None, "tags": [{"name": "category", "value": "receipt"}],
    }
    listed = resend.Emails.list({"limit": 10})
    assert listed["object"] == "list" and listed["has_more"] is False
    assert [e["id"] for e in listed["data"]] == [FIRST_ID]
    assert "html" not in listed["data"][0] and "tags" not in listed["data"][0]


def test_update_and_cancel(sdk: EmulatorServer) -> None:
    scheduled = resend.Emails.send(params(scheduled_at="tomorrow at 9am"))
    updated = resend.Emails.update({"id": scheduled["id"], "scheduled_at": "2026-05-16T08:00:00.000Z"})
    assert updated["object"] == "email" and updated["id"] == scheduled["id"]
    assert resend.Emails.get(scheduled["id"])["scheduled_at"] == "2026-05-16 08:00:00+00"
    canceled = resend.Emails.cancel(scheduled["id"])
    assert canceled["object"] == "email" and canceled["id"] == scheduled["id"]
    assert resend.Emails.get(scheduled["id"])["last_event"] == "canceled"


def test_share(sdk: EmulatorServer) -> None:
    sent = resend.Emails.send(params())
    shared = resend.Emails.share(sent["id"], {"expires_in": "10m"})
    assert shared["object"] == "email" and shared["id"] == sent["id"]
    assert shared["url"].startswith(f"{sdk.url}/_emulator/shared?token=")


def test_metrics(sdk: EmulatorServer) -> None:
    resend.Emails.send(params())
    resend.Emails.send(params(to="bounced@resend.dev"))
    sdk.clock.advance(5)
    metrics = resend.Emails.metrics({"metrics": ["sent", "bounced", "delivery_rate"],
                                     "dimensions": ["domain"]})
    assert metrics["totals"] == {"sent": 2, "bounced": 1, "delivery_rate": 50.0}
    assert [(row["domain_name"], row["sent"]) for row in metrics["data"]] == [("mail.acme.dev", 2)]


def test_attachments_list_get(sdk: EmulatorServer) -> None:
    sent = resend.Emails.send(params(attachments=[
        {"filename": "logo.png", "content": list(PNG), "inline_content_id": "logo"},
        {"filename": "a.txt", "content": base64.b64encode(b"abc").decode()},
    ]))
    listed = resend.Emails.Attachments.list(sent["id"])
    assert [a["filename"] for a in listed["data"]] == ["a.txt", "logo.png"]
    one = resend.Emails.Attachments.get(sent["id"], listed["data"][1]["id"])
    assert one["object"] == "attachment" and one["content_disposition"] == "inline"
    assert one["content_id"] == "logo" and one["size"] == len(PNG)
    limited = resend.Emails.Attachments.list(sent["id"], {"limit": 1})
    assert limited["has_more"] is True


def test_batch_strict_and_permissive(sdk: EmulatorServer) -> None:
    strict = resend.Batch.send([params(subject="a"), params(subject="b")], {"idempotency_key": "b1"})
    assert len(strict["data"]) == 2 and "errors" not in strict
    permissive = resend.Batch.send([params(), params(**{"from": "bad"})], {"batch_validation": "permissive"})
    assert len(permissive["data"]) == 1
    assert permissive["errors"][0]["index"] == 1
    with pytest.raises(resend.exceptions.ResendError) as refused:
        resend.Batch.send([params()] * 101)
    assert refused.value.code == 422


def test_errors_surface_as_sdk_exceptions(sdk: EmulatorServer) -> None:
    with pytest.raises(resend.exceptions.ResendError) as missing:
        resend.Emails.send({"from": SENDER, "subject": "x", "html": "<p>x</p>"})  # type: ignore[typeddict-item]
    assert missing.value.code == 422 and missing.value.error_type == "missing_required_field"
    with pytest.raises(resend.exceptions.ResendError) as unknown:
        resend.Emails.get("00000000-0000-4000-8000-000000000000")
    assert unknown.value.code == 404


def test_async_methods(sdk: EmulatorServer) -> None:
    async def run() -> None:
        sent = await resend.Emails.send_async(params(scheduled_at="in 1 hour"))
        got = await resend.Emails.get_async(sent["id"])
        assert got["last_event"] == "scheduled"
        listed = await resend.Emails.list_async()
        assert [e["id"] for e in listed["data"]] == [sent["id"]]
        updated = await resend.Emails.update_async({"id": sent["id"], "scheduled_at": "in 2 hours"})
        assert updated["id"] == sent["id"]
        shared = await resend.Emails.share_async(sent["id"])
        assert shared["id"] == sent["id"]
        assert (await resend.Emails.cancel_async(sent["id"]))["id"] == sent["id"]
        metrics = await resend.Emails.metrics_async({"metrics": ["sent"]})
        assert metrics["object"] == "metrics"
        batch = await resend.Batch.send_async([params(), params()])
        assert len(batch["data"]) == 2
        attachment = {"filename": "a.txt", "content": "aGk="}
        with_file = await resend.Emails.send_async(params(attachments=[attachment]))
        files = await resend.Emails.Attachments.list_async(with_file["id"])
        one = await resend.Emails.Attachments.get_async(with_file["id"], files["data"][0]["id"])
        assert one["filename"] == "a.txt" and one["size"] == 2

    asyncio.run(run())
