"""The `inbox.*` webhook events (reference/webhooks.md §6.8): emitted by the inbox operations, delivered
signed to a real local receiver, with the documented payload keys."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.resources.webhooks.catalogue import INBOX_EVENTS
from tests.conftest import AUTH, make_settings
from tests.inboxes_helpers import ADDRESS, create_inbox, inject, raw_mail, receiving_domain
from tests.webhooks_helpers import Receiver, create_hook, verify_all


@pytest.fixture
def live() -> Iterator[TestClient]:
    """Frozen at the real time: the verifiers compare `svix-timestamp` with the wall clock."""
    settings = make_settings(clock_start=datetime.now(UTC).replace(microsecond=0))
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as test_client:
        yield test_client


def events(client: TestClient) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    client.app.state.emu.events.listen(seen.append)  # type: ignore[attr-defined]
    return seen


def inbox_events(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": e["type"], **e["data"]} for e in seen if e["type"].startswith("inbox.")]


def test_a_whole_conversation_emits_the_documented_events(live: TestClient, receiver: Receiver) -> None:
    hook = create_hook(live, receiver.url, list(INBOX_EVENTS))
    seen = events(live)
    receiving_domain(live)
    inbox = create_inbox(live)
    first = inject(live, raw_mail("Refund", "1", "<a@example.org>"))
    inject(live, raw_mail("Re: Refund", "2", "<b@example.org>", in_reply_to="<a@example.org>"))
    thread_id = live.get(f"/inboxes/{inbox['id']}/threads").json()["data"][0]["id"]
    label = live.post(f"/inboxes/{inbox['id']}/labels", json={"name": "Urgent", "color": "crimson"}).json()
    live.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}",
               json={"folder": "archive", "label_id": label["id"]})
    live.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/reply", json={"text": "ok"})
    draft = live.post(f"/inboxes/{inbox['id']}/drafts",
                      json={"to": "ada@example.org", "subject": "Hi"}).json()
    live.patch(f"/inboxes/{inbox['id']}/drafts/{draft['id']}", json={"text": "Hello"})
    live.post(f"/inboxes/{inbox['id']}/drafts/{draft['id']}/send")
    scratch = live.post(f"/inboxes/{inbox['id']}/drafts", json={"subject": "x"}).json()
    live.delete(f"/inboxes/{inbox['id']}/drafts/{scratch['id']}")
    live.delete(f"/inboxes/{inbox['id']}/labels/{label['id']}")  # no labels event [docs]
    live.patch(f"/inboxes/{inbox['id']}", json={"name": "Help"})
    live.delete(f"/inboxes/{inbox['id']}")
    expected = [
        "inbox.created", "inbox.thread.created", "inbox.email.received", "inbox.email.received",
        "inbox.thread.folder.updated", "inbox.thread.labels.updated", "inbox.email.sent",
        "inbox.draft.created", "inbox.draft.updated", "inbox.draft.sent", "inbox.email.sent",
        "inbox.draft.created", "inbox.draft.deleted", "inbox.updated", "inbox.deleted",
    ]
    assert [e["type"] for e in inbox_events(seen)] == expected
    assert live.post("/_emulator/webhooks/flush").status_code == 200
    assert sorted(receiver.types()) == sorted(expected)
    for got in receiver.received:
        verify_all(hook["signing_secret"], got)
        assert got.json["data"]["inbox_id"] == inbox["id"]


def test_payload_keys_follow_the_reference(client: TestClient) -> None:
    seen = events(client)
    receiving_domain(client)
    inbox = create_inbox(client)
    email_id = inject(client, raw_mail("Refund", "1", "<a@example.org>"))
    thread_id = client.get(f"/inboxes/{inbox['id']}/threads").json()["data"][0]["id"]
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": "spam"})
    draft = client.post(f"/inboxes/{inbox['id']}/drafts", json={
        "thread_id": thread_id, "reply_to_email_id": email_id, "to": "ada@example.org",
        "subject": "Re: Refund", "text": "ok"}).json()
    sent = client.post(f"/inboxes/{inbox['id']}/drafts/{draft['id']}/send").json()
    by_type = {e["type"]: e for e in inbox_events(seen)}
    thread = {"object": "inbox_thread", "id": thread_id, "subject": "Refund", "folder": "inbox",
              "labels": [], "read": False}
    email = {"id": email_id, "direction": "inbound", "from": "Ada Lovelace <ada@example.org>",
             "to": [ADDRESS], "cc": [], "bcc": [], "reply_to": [], "subject": "Refund",
             "message_id": "<a@example.org>",
             "attachments": [], "read": False, "received_at": "2026-05-14T09:00:00.000Z"}
    assert by_type["inbox.thread.created"] == {"type": "inbox.thread.created", "source": "system",
                                               "inbox_id": inbox["id"], "thread_id": thread_id,
                                               "email_id": email_id, "thread": thread, "email": email}
    assert by_type["inbox.thread.folder.updated"] == {
        "type": "inbox.thread.folder.updated", "from": "inbox", "to": "spam", "source": "api",
        "inbox_id": inbox["id"], "thread_id": thread_id, "thread": {**thread, "folder": "spam"}}
    created = by_type["inbox.draft.created"]
    assert list(created) == ["type", "source", "inbox_id", "thread_id", "draft_id", "thread", "draft"]
    assert "html" not in created["draft"] and "text" not in created["draft"]
    draft_sent = by_type["inbox.draft.sent"]
    assert list(draft_sent) == ["type", "source", "inbox_id", "thread_id", "email_id", "draft_id", "thread",
                                "draft"]
    assert (draft_sent["email_id"], draft_sent["draft"]["email_id"]) == (sent["email_id"], sent["email_id"])
    assert by_type["inbox.email.sent"]["email"]["direction"] == "outbound"
    assert list(by_type["inbox.created"]["inbox"]) == [
        "object", "id", "name", "email_address", "domain_id", "receiving_address", "from_name", "unread",
        "drafts", "last_received", "created_at"]


def test_a_rejected_request_emits_nothing(client: TestClient) -> None:
    seen = events(client)
    receiving_domain(client)
    inbox = create_inbox(client)
    client.post(f"/inboxes/{inbox['id']}/drafts", json={"subject": "x" * 2001})
    client.patch(f"/inboxes/{inbox['id']}", json={})
    assert [e["type"] for e in inbox_events(seen)] == ["inbox.created"]
