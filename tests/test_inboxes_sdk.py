"""Every method of the official Python SDK's Inboxes (threads, thread emails, thread labels, drafts,
labels, agent), sync and async, against a real uvicorn server; each answer carries every field the
SDK's types declare."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import resend
from resend.exceptions import ResendError
from resend.inboxes import (
    Inbox,
    InboxAgentSettings,
    InboxDraft,
    InboxDraftListItem,
    InboxLabel,
    InboxListItem,
    InboxThread,
    InboxThreadEmail,
    InboxThreadLabel,
    InboxThreadSearchResult,
    InboxThreadSummary,
)

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.sdk_types import keys_declared as declared
from tests.templates_helpers import sdk_against

Inboxes = resend.Inboxes


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[httpx.Client]:
    live_server.reset()
    with sdk_against(live_server.url), httpx.Client(base_url=live_server.url, headers=AUTH) as http:
        created = http.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}})
        assert created.status_code == 201, created.text
        yield http



def inject(http: httpx.Client, raw: bytes) -> str:
    reply = http.post("/_emulator/inbound", content=raw, headers={"content-type": "message/rfc822"})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"][0]["id"])


def test_inbox_methods(emulator: httpx.Client) -> None:
    created = declared(Inboxes.CreateResponse, Inboxes.create({"email_address": ADDRESS, "name": "Support"}))
    inbox_id = created["id"]
    assert declared(Inbox, Inboxes.get(ADDRESS))["id"] == inbox_id
    listed = declared(Inboxes.ListResponse, Inboxes.list({"limit": 10}))
    assert [declared(InboxListItem, item)["id"] for item in listed["data"]] == [inbox_id]
    updated = declared(Inboxes.UpdateResponse, Inboxes.update({"id": inbox_id, "from_name": "Ada"}))
    assert updated == {"object": "inbox", "id": inbox_id}
    assert Inboxes.get(inbox_id)["from_name"] == "Ada"
    assert declared(Inboxes.RemoveResponse, Inboxes.remove(inbox_id))["deleted"] is True
    with pytest.raises(ResendError) as gone:
        Inboxes.get(inbox_id)
    assert (gone.value.code, gone.value.error_type) == (404, "not_found")


def test_thread_and_thread_email_methods(emulator: httpx.Client) -> None:
    inbox_id = Inboxes.create({"email_address": ADDRESS})["id"]
    first = inject(emulator, raw_mail("Refund", "Could I get a refund?", "<a@example.org>"))
    threads = declared(Inboxes.Threads.ListResponse, Inboxes.Threads.list(inbox_id, {"folders": ["inbox"]}))
    thread_id = declared(InboxThread, threads["data"][0])["id"]
    found = declared(Inboxes.Threads.SearchResponse, Inboxes.Threads.search(inbox_id, {"query": "refund"}))
    assert declared(InboxThreadSearchResult, found["data"][0])["matched_email_id"] == first
    assert declared(InboxThreadSummary, Inboxes.Threads.get(inbox_id, thread_id))["subject"] == "Refund"
    summary = Inboxes.Threads.update({"inbox_id": inbox_id, "id": thread_id, "read": True,
                                      "folder": "archive"})
    assert declared(InboxThreadSummary, summary)["folder"] == "archive"
    emails = declared(Inboxes.Threads.Emails.ListResponse, Inboxes.Threads.Emails.list(inbox_id, thread_id))
    assert [declared(InboxThreadEmail, e)["id"] for e in emails["data"]] == [first]
    assert declared(InboxThreadEmail, Inboxes.Threads.Emails.get(inbox_id, thread_id, first))["read"] is True
    reply = Inboxes.Threads.Emails.reply({"inbox_id": inbox_id, "thread_id": thread_id, "email_id": first,
                                          "text": "Refund issued."})
    forward = Inboxes.Threads.Emails.forward({"inbox_id": inbox_id, "thread_id": thread_id, "email_id": first,
                                              "to": "billing@example.net"})
    sent = [declared(Inboxes.Threads.Emails.ReplyResponse, reply)["id"],
            declared(Inboxes.Threads.Emails.ForwardResponse, forward)["id"]]
    outbox = emulator.get("/_emulator/outbox").json()["data"]
    assert sorted(e["id"] for e in outbox) == sorted(sent)
    removed = declared(Inboxes.Threads.RemoveResponse, Inboxes.Threads.remove(inbox_id, thread_id))
    assert removed == {"object": "inbox_thread", "id": thread_id, "deleted": True}


def test_thread_label_and_label_methods(emulator: httpx.Client) -> None:
    inbox_id = Inboxes.create({"email_address": ADDRESS})["id"]
    inject(emulator, raw_mail("Refund", "text", "<a@example.org>"))
    thread_id = Inboxes.Threads.list(inbox_id)["data"][0]["id"]
    label = declared(Inboxes.Labels.CreateResponse,
                     Inboxes.Labels.create({"inbox_id": inbox_id, "name": "Urgent", "color": "crimson"}))
    labels = declared(Inboxes.Labels.ListResponse, Inboxes.Labels.list(inbox_id))
    assert [declared(InboxLabel, item)["name"] for item in labels["data"]] == ["Urgent"]
    renamed = Inboxes.Labels.update({"inbox_id": inbox_id, "id": label["id"], "name": "Now"})
    assert declared(Inboxes.Labels.UpdateResponse, renamed) == {"object": "inbox_label", "id": label["id"]}
    added = Inboxes.Threads.Labels.add({"inbox_id": inbox_id, "thread_id": thread_id,
                                        "labels": [label["id"]]})
    on_thread = declared(Inboxes.Threads.Labels.ListResponse, added)["data"]
    assert [declared(InboxThreadLabel, item)["name"] for item in on_thread] == ["Now"]
    replaced = Inboxes.Threads.Labels.set({"inbox_id": inbox_id, "thread_id": thread_id, "labels": []})
    assert declared(Inboxes.Threads.Labels.ListResponse, replaced)["data"] == []
    Inboxes.Threads.Labels.add({"inbox_id": inbox_id, "thread_id": thread_id, "labels": [label["id"]]})
    taken_off = Inboxes.Threads.Labels.remove(inbox_id, thread_id, label["id"])
    assert declared(Inboxes.Threads.Labels.ListResponse, taken_off)["data"] == []
    deleted = declared(Inboxes.Labels.RemoveResponse, Inboxes.Labels.remove(inbox_id, label["id"]))
    assert deleted == {"object": "inbox_label", "id": label["id"], "deleted": True}


def test_draft_methods(emulator: httpx.Client) -> None:
    inbox_id = Inboxes.create({"email_address": ADDRESS})["id"]
    created = declared(Inboxes.Drafts.CreateResponse, Inboxes.Drafts.create(
        {"inbox_id": inbox_id, "to": "ada@example.org", "subject": "Hello", "text": "Hi Ada"}))
    listed = declared(Inboxes.Drafts.ListResponse, Inboxes.Drafts.list(inbox_id, {"limit": 5}))
    assert declared(InboxDraftListItem, listed["data"][0])["snippet"] == "Hi Ada"
    updated = Inboxes.Drafts.update({"inbox_id": inbox_id, "id": created["id"], "subject": "Hello again"})
    assert declared(Inboxes.Drafts.UpdateResponse, updated)["id"] == created["id"]
    assert declared(InboxDraft, Inboxes.Drafts.get(inbox_id, created["id"]))["subject"] == "Hello again"
    sent = declared(Inboxes.Drafts.SendResponse, Inboxes.Drafts.send(inbox_id, created["id"]))
    assert sent["id"] == created["id"]
    assert Inboxes.Drafts.get(inbox_id, created["id"])["email_id"] == sent["email_id"]
    other = Inboxes.Drafts.create({"inbox_id": inbox_id, "subject": "Scratch"})
    removed = declared(Inboxes.Drafts.RemoveResponse, Inboxes.Drafts.remove(inbox_id, other["id"]))
    assert removed == {"object": "inbox_draft", "id": other["id"], "deleted": True}
    with pytest.raises(ResendError) as twice:
        Inboxes.Drafts.send(inbox_id, created["id"])
    assert twice.value.code == 409


def test_agent_methods(emulator: httpx.Client) -> None:
    inbox_id = Inboxes.create({"email_address": ADDRESS})["id"]
    empty = declared(InboxAgentSettings, Inboxes.Agent.get(inbox_id))
    assert (empty["instructions"], empty["tone"], empty["actions"]) == (None, None, [])
    updated = Inboxes.Agent.update({"inbox_id": inbox_id, "instructions": "Be brief.",
                                    "tone": "concise_casual", "actions": ["draft_reply", "archive"]})
    assert declared(Inboxes.Agent.UpdateResponse, updated)["object"] == "inbox_agent"
    settings = Inboxes.Agent.get(inbox_id)
    assert (settings["tone"], settings["actions"]) == ("concise_casual", ["draft_reply", "archive"])


def test_async_methods(emulator: httpx.Client) -> None:
    inject_later = raw_mail("Refund", "text", "<a@example.org>")

    async def scenario() -> None:
        inbox_id = (await Inboxes.create_async({"email_address": ADDRESS}))["id"]
        assert (await Inboxes.list_async())["data"][0]["id"] == inbox_id
        await Inboxes.update_async({"id": inbox_id, "name": "Help"})
        assert (await Inboxes.get_async(inbox_id))["name"] == "Help"
        inject(emulator, inject_later)
        thread_id = (await Inboxes.Threads.list_async(inbox_id))["data"][0]["id"]
        assert len((await Inboxes.Threads.search_async(inbox_id, {"query": "text"}))["data"]) == 1
        await Inboxes.Threads.update_async({"inbox_id": inbox_id, "id": thread_id, "read": True})
        assert (await Inboxes.Threads.get_async(inbox_id, thread_id))["read"] is True
        email_id = (await Inboxes.Threads.Emails.list_async(inbox_id, thread_id))["data"][0]["id"]
        assert (await Inboxes.Threads.Emails.get_async(inbox_id, thread_id, email_id))["id"] == email_id
        await Inboxes.Threads.Emails.reply_async({"inbox_id": inbox_id, "thread_id": thread_id,
                                                  "email_id": email_id, "text": "ok"})
        await Inboxes.Threads.Emails.forward_async({"inbox_id": inbox_id, "thread_id": thread_id,
                                                    "email_id": email_id, "to": "b@example.net"})
        label = await Inboxes.Labels.create_async({"inbox_id": inbox_id, "name": "L"})
        await Inboxes.Labels.update_async({"inbox_id": inbox_id, "id": label["id"], "color": "teal"})
        assert (await Inboxes.Labels.list_async(inbox_id))["data"][0]["color"] == "teal"
        await Inboxes.Threads.Labels.add_async({"inbox_id": inbox_id, "thread_id": thread_id,
                                                "labels": [label["id"]]})
        await Inboxes.Threads.Labels.set_async({"inbox_id": inbox_id, "thread_id": thread_id,
                                                "labels": [label["id"]]})
        await Inboxes.Threads.Labels.remove_async(inbox_id, thread_id, label["id"])
        await Inboxes.Labels.remove_async(inbox_id, label["id"])
        draft = await Inboxes.Drafts.create_async({"inbox_id": inbox_id, "to": "a@example.org",
                                                   "subject": "s", "text": "t"})
        await Inboxes.Drafts.update_async({"inbox_id": inbox_id, "id": draft["id"], "text": "u"})
        assert (await Inboxes.Drafts.get_async(inbox_id, draft["id"]))["text"] == "u"
        assert len((await Inboxes.Drafts.list_async(inbox_id))["data"]) == 1
        await Inboxes.Drafts.send_async(inbox_id, draft["id"])
        scratch = await Inboxes.Drafts.create_async({"inbox_id": inbox_id, "subject": "x"})
        await Inboxes.Drafts.remove_async(inbox_id, scratch["id"])
        await Inboxes.Agent.update_async({"inbox_id": inbox_id, "actions": ["mark_as_spam"]})
        assert (await Inboxes.Agent.get_async(inbox_id))["actions"] == ["mark_as_spam"]
        assert (await Inboxes.Threads.remove_async(inbox_id, thread_id))["deleted"] is True
        assert (await Inboxes.remove_async(inbox_id))["deleted"] is True

    asyncio.run(scenario())
    assert len(emulator.get("/_emulator/outbox").json()["data"]) == 3
