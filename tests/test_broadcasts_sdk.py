"""Every method of the official Python SDK's Broadcasts, sync and async, against a real uvicorn server; each
answer carries every field the SDK's types declare as required."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import resend
from resend.broadcasts._broadcast import Broadcast
from resend.broadcasts._broadcast_recipient import BroadcastRecipient
from resend.broadcasts._broadcasts import Broadcasts
from resend.exceptions import ResendError

from emulator.testing import EmulatorServer
from tests.sdk_types import keys_declared as declared
from tests.templates_helpers import sdk_against


@pytest.fixture
def emulator(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server



def audience(server: EmulatorServer) -> str:
    segment_id = resend.Segments.create({"name": "Everyone"})["id"]
    contact_id = resend.Contacts.create({"email": "lin@example.org", "first_name": "Lin"})["id"]
    resend.Contacts.Segments.add({"contact_id": contact_id, "segment_id": segment_id})
    return str(segment_id)


def flush(server: EmulatorServer) -> None:
    assert httpx.post(f"{server.url}/_emulator/flush").status_code == 200


def test_broadcasts_methods(emulator: EmulatorServer) -> None:
    segment_id = audience(emulator)
    created = declared(Broadcasts.CreateResponse, resend.Broadcasts.create({
        "segment_id": segment_id, "from": "Acme <news@acme.dev>", "subject": "Hi {{{FIRST_NAME}}}",
        "html": "<p>Hello {{{FIRST_NAME|there}}}</p>", "name": "Launch"}))
    broadcast_id = created["id"]
    declared(Broadcasts.UpdateResponse, resend.Broadcasts.update(
        {"broadcast_id": broadcast_id, "preview_text": "Big news"}))
    got = declared(Broadcast, resend.Broadcasts.get(broadcast_id))
    assert (got["status"], got["preview_text"], got["name"]) == ("draft", "Big news", "Launch")
    listed = declared(Broadcasts.ListResponse, resend.Broadcasts.list())
    assert [item["id"] for item in listed["data"]] == [broadcast_id]
    copy = declared(Broadcasts.DuplicateResponse, resend.Broadcasts.duplicate(broadcast_id))
    assert declared(Broadcasts.RemoveResponse, resend.Broadcasts.remove(copy["id"]))["deleted"] is True
    scheduled = declared(Broadcasts.SendResponse, resend.Broadcasts.send(
        {"broadcast_id": broadcast_id, "scheduled_at": "in 1 min"}))
    assert scheduled["id"] == broadcast_id
    declared(Broadcasts.CancelResponse, resend.Broadcasts.cancel(broadcast_id))
    resend.Broadcasts.send({"broadcast_id": broadcast_id})
    flush(emulator)
    assert resend.Broadcasts.get(broadcast_id)["status"] == "sent"
    recipients = declared(Broadcasts.RecipientsResponse,
                          resend.Broadcasts.recipients(broadcast_id, {"type": "sent"}))
    assert [declared(BroadcastRecipient, item)["email"] for item in recipients["data"]] == ["lin@example.org"]
    links = declared(Broadcasts.ListClickedLinksResponse, resend.Broadcasts.clicked_links(broadcast_id))
    assert links["data"] == []
    with pytest.raises(ResendError) as refused:
        resend.Broadcasts.remove(broadcast_id)
    assert (refused.value.code, refused.value.error_type) == (422, "validation_error")


def test_async_methods(emulator: EmulatorServer) -> None:
    segment_id = audience(emulator)

    async def scenario() -> None:
        created = await resend.Broadcasts.create_async({
            "segment_id": segment_id, "from": "news@acme.dev", "subject": "Hi", "text": "Hello",
            "send": True})
        await asyncio.to_thread(flush, emulator)
        assert (await resend.Broadcasts.get_async(created["id"]))["status"] == "sent"
        assert len((await resend.Broadcasts.list_async())["data"]) == 1

    asyncio.run(scenario())


def test_every_other_async_method(emulator: EmulatorServer) -> None:
    segment_id = audience(emulator)

    async def scenario() -> None:
        draft = await resend.Broadcasts.create_async({
            "segment_id": segment_id, "from": "news@acme.dev", "subject": "Hi", "html": "<p>Hi</p>"})
        broadcast_id = draft["id"]
        updated = await resend.Broadcasts.update_async({"broadcast_id": broadcast_id, "name": "Async"})
        assert declared(Broadcasts.UpdateResponse, updated)["id"] == broadcast_id
        copy = declared(Broadcasts.DuplicateResponse, await resend.Broadcasts.duplicate_async(broadcast_id))
        removed = declared(Broadcasts.RemoveResponse, await resend.Broadcasts.remove_async(copy["id"]))
        assert removed == {"object": "broadcast", "id": copy["id"], "deleted": True}
        scheduled = await resend.Broadcasts.send_async(
            {"broadcast_id": broadcast_id, "scheduled_at": "in 1 hour"})
        assert declared(Broadcasts.SendResponse, scheduled) == {"id": broadcast_id}
        cancelled = declared(Broadcasts.CancelResponse, await resend.Broadcasts.cancel_async(broadcast_id))
        assert cancelled == {"object": "broadcast", "id": broadcast_id}
        await resend.Broadcasts.send_async({"broadcast_id": broadcast_id})
        await asyncio.to_thread(flush, emulator)
        recipients = await resend.Broadcasts.recipients_async(broadcast_id, {"type": "sent"})
        assert [item["email"] for item in declared(Broadcasts.RecipientsResponse, recipients)["data"]] == [
            "lin@example.org"]
        links = await resend.Broadcasts.clicked_links_async(broadcast_id)
        assert declared(Broadcasts.ListClickedLinksResponse, links)["data"] == []

    asyncio.run(scenario())


def test_list_items_carry_what_the_sdk_item_types_declare(emulator: EmulatorServer) -> None:
    """The SDK types list items as the whole `Broadcast`; the OpenAPI's list item (and so this emulator)
    leaves out the content fields, which only `get` returns."""
    created = resend.Broadcasts.create({"segment_id": audience(emulator), "from": "news@acme.dev",
                                        "subject": "Hi", "text": "Hello", "send": True})
    flush(emulator)
    content = frozenset({"object", "from", "subject", "reply_to", "preview_text", "html", "text"})
    [item] = resend.Broadcasts.list()["data"]
    assert set(declared(Broadcast, item, but=content)) == set(Broadcast.__required_keys__) - content
    [recipient] = resend.Broadcasts.recipients(created["id"], {"type": "sent"})["data"]
    declared(BroadcastRecipient, recipient)
