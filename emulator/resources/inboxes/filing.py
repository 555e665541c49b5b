"""How mail joins threads: inbound mail (from Receiving) and sent mail (reply, forward, draft send).

A message joins the thread of any message of the same inbox whose Message-ID it names in
`In-Reply-To` or `References`; otherwise it starts a thread. [recommendation] No subject matching:
two unrelated mails titled "Hello" must not merge.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from emulator.resources.inboxes.events import email_event, thread_event
from emulator.resources.inboxes.store import next_tick

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

_MESSAGE_IDS = re.compile(r"<[^<>\s]+>")
# A new message brings a thread filed away back to the Inbox folder; spam and trash keep it
# [recommendation: mail clients do this; the reference is silent].
REOPENED_BY_MAIL = ("archive", "sent")


def referenced_ids(headers: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for name in ("in-reply-to", "references"):
        found += _MESSAGE_IDS.findall(str(headers.get(name) or ""))
    return found


async def find_thread(tx: Tx, inbox_id: str, refs: list[str]) -> Row | None:
    if not refs:
        return None
    marks = ",".join("?" for _ in refs)
    return await tx.one(
        f"SELECT t.* FROM inbox_messages m JOIN inbox_threads t ON t.id = m.thread_id WHERE m.inbox_id = ?"
        f" AND m.header_id IN ({marks}) ORDER BY m.seq DESC LIMIT 1", (inbox_id, *refs))


async def open_thread(tx: Tx, inbox_id: str, subject: str | None, folder: str) -> Row:
    row: Row = {"id": tx.new_id(), "account": tx.account, "inbox_id": inbox_id, "subject": subject,
                "folder": folder, "trash_until": None, "tick": await next_tick(tx, "inbox_threads", inbox_id),
                "active_at": tx.now_db, "created_at": tx.now_db}
    await tx.insert("inbox_threads", row)
    return row


async def touch(tx: Tx, thread: Row, folder: str) -> Row:
    changes = {"tick": await next_tick(tx, "inbox_threads", thread["inbox_id"]), "active_at": tx.now_db,
               "folder": folder}
    if folder != "trash":
        changes["trash_until"] = None
    await tx.update("inbox_threads", thread["id"], changes)
    return {**thread, **changes}


async def _message_id(tx: Tx, wanted: str) -> str:
    # A message keeps the id of its received or sent email, unless another inbox holds that one.
    taken = await tx.one("SELECT id FROM inbox_messages WHERE id = ?", (wanted,))
    return tx.new_id() if taken else wanted


async def add_message(tx: Tx, thread: Row, fields: dict[str, Any]) -> Row:
    row: Row = {"id": await _message_id(tx, fields.pop("id")), "account": tx.account,
                "inbox_id": thread["inbox_id"], "thread_id": thread["id"], **fields}
    await tx.insert("inbox_messages", row)
    return row


async def accept_inbound(tx: Tx, email: Row, attachments: list[Row], received_for: list[str]) -> None:
    """A received email (receiving.deliver) joins a thread in every inbox it was addressed to."""
    marks = ",".join("?" for _ in received_for)
    inboxes = await tx.all(f"SELECT * FROM inboxes WHERE account = ? AND (email_address IN ({marks})"
                           f" OR receiving_address IN ({marks}))", (tx.account, *received_for, *received_for))
    for inbox in inboxes:
        await _file_inbound(tx, inbox, email, attachments)


async def _file_inbound(tx: Tx, inbox: Row, email: Row, attachments: list[Row]) -> None:
    thread = await find_thread(tx, inbox["id"], referenced_ids(json.loads(email["headers"])))
    created = thread is None
    if thread is None:
        thread = await open_thread(tx, inbox["id"], email["subject"], "inbox")
        old_folder = "inbox"
    else:
        old_folder = thread["folder"]
        thread = await touch(tx, thread, "inbox" if old_folder in REOPENED_BY_MAIL else old_folder)
    # [sdk] `to` of a received message is the address it was delivered to; `bcc` is always empty.
    message = await add_message(tx, thread, {
        "id": email["id"], "direction": "inbound", "from_addr": email["from_addr"],
        "to_addrs": json.dumps([inbox["email_address"]]), "cc": email["cc"], "bcc": "[]",
        "reply_to": email["reply_to"], "subject": email["subject"], "message_id": email["message_id"],
        "header_id": email["message_id"], "header_to": email["to_addrs"], "source_id": email["id"],
        "html": email["html"], "text": email["text"],
        "attachments": json.dumps([{"id": a["id"], "filename": a["filename"], "size": a["size"]}
                                   for a in attachments]),
        "read": 0, "received_at": email["created_at"]})
    if created:
        await email_event(tx, "inbox.thread.created", thread, message, "system")
    elif old_folder != thread["folder"]:
        await thread_event(tx, "inbox.thread.folder.updated", thread, "system",
                           **{"from": old_folder, "to": thread["folder"]})
    await email_event(tx, "inbox.email.received", thread, message, "system")
