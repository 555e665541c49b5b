"""Mail that arrives over SMTP joins inbox threads: a three-message conversation sent by a real SMTP client
forms one thread, oldest first, and a reply through the API is the fourth message, outbound, in the outbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.smtp_helpers import LiveEmulator, email_id_of, transmit


@pytest.fixture(scope="module")
def live() -> Iterator[LiveEmulator]:
    with LiveEmulator() as server:
        yield server


def test_smtp_conversation_forms_one_thread_and_an_api_reply_joins_it(live: LiveEmulator) -> None:
    live.reset()
    assert live.http.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}}
                          ).status_code == 201
    inbox = live.http.post("/inboxes", json={"email_address": ADDRESS}).json()
    header_ids: list[str] = []
    with live.starttls() as client:
        for n in range(1, 4):
            raw = raw_mail("Refund" if n == 1 else "Re: Refund", f"Message {n}", f"<client{n}@example.org>",
                           in_reply_to=header_ids[-1] if header_ids else None,
                           references=" ".join(header_ids) or None)
            code, reply = transmit(client, raw, "ada@example.org", [ADDRESS])
            assert code == 250, reply
            # The emulator stamps its own Message-ID on what it relays; the next message answers that one.
            header_ids.append(live.http.get(f"/emails/{email_id_of(reply)}").json()["message_id"])
    [listed] = live.http.get(f"/inboxes/{inbox['id']}/threads").json()["data"]
    thread = live.http.get(f"/inboxes/{inbox['id']}/threads/{listed['id']}").json()
    assert [m["text"].strip() for m in thread["messages"]] == ["Message 1", "Message 2", "Message 3"]
    assert [m["message_id"] for m in thread["messages"]] == header_ids
    last = thread["messages"][-1]["id"]
    sent = live.http.post(f"/inboxes/{inbox['id']}/threads/{listed['id']}/emails/{last}/reply",
                          json={"text": "Refund issued."}).json()
    messages = live.http.get(f"/inboxes/{inbox['id']}/threads/{listed['id']}").json()["messages"]
    assert [(m["id"], m["direction"]) for m in messages][3:] == [(sent["id"], "outbound")]
    assert len(messages) == 4
    outbox = live.http.get("/_emulator/outbox", params={"source": "inbox"}).json()["data"]
    assert [(e["id"], e["to"]) for e in outbox] == [(sent["id"], ["Ada Lovelace <ada@example.org>"])]
