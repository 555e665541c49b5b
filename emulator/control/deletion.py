"""Deleting mail: one email, a selection, a search's results or all of it, sent or received.

Only mail goes: domains, API keys, webhooks, inboxes, contacts and templates stay (a reset is the other,
separate action). An email takes with it everything that hangs off it, in the transaction that deletes
it: attachments, tracked links, scripted outcomes, its read mark, its events and the webhook messages
and attempts they caused (a pending delivery about a deleted email is not sent), and the jobs still due
for it (a scheduled send, a delivery outcome). Afterwards the API answers 404 for it like any unknown id.

Many emails are deleted in chunks of CHUNK, each its own short transaction (so the event loop never
waits long), newest first and only up to the newest email that existed when the delete began: mail
arriving meanwhile is not swept up by "delete all".
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.control import reads, windows
from emulator.core.events import notify

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

CHUNK = 500
IN_LIST = reads.IN_LIST


class Mail(NamedTuple):
    """Sent or received mail: its table, the tables keyed by its `email_id`, its read-state box."""

    box: str
    table: str
    children: tuple[str, ...]


SENT = Mail("outbox", "emails", ("email_attachments", "email_links", "scripted_outcomes", "email_labels"))
RECEIVED = Mail("received", "received_emails", ("received_attachments",))


async def remove(tx: Tx, mail: Mail, ids: list[str]) -> int:
    """Delete these emails (of any account: callers scope `ids`) and all that hangs off them."""
    if not ids:
        return 0
    listed = json.dumps(ids)
    for child in mail.children:
        await tx.run(f"DELETE FROM {child} WHERE email_id {IN_LIST}", (listed,))
    events = f"SELECT id FROM events WHERE subject_id {IN_LIST}"
    messages = f"SELECT id FROM webhook_messages WHERE event_id IN ({events})"
    await tx.run(f"DELETE FROM webhook_attempts WHERE message_id IN ({messages})", (listed,))
    await tx.run(f"DELETE FROM webhook_messages WHERE event_id IN ({events})", (listed,))
    await tx.run(f"DELETE FROM events WHERE subject_id {IN_LIST}", (listed,))
    await tx.run(f"DELETE FROM jobs WHERE json_extract(payload, '$.email_id') {IN_LIST}", (listed,))
    await reads.forget(tx, mail.box, mail.table, listed)
    return await tx.run(f"DELETE FROM {mail.table} WHERE id {IN_LIST}", (listed,))


async def delete_one(tx: Tx, mail: Mail, email_id: str) -> bool:
    """Delete one of the account's emails; False when it has none with this id."""
    row = await tx.one(f"SELECT id FROM {mail.table} WHERE id = ? AND account = ?", (email_id, tx.account))
    return row is not None and await remove(tx, mail, [email_id]) > 0


async def delete_where(emu: Emulator, mail: Mail, account: str | None, where: str, params: list[Any],
                       prepare: Callable[[Tx], Awaitable[None]] | None = None,
                       upto: int | None = None) -> int:
    """Delete every email matching `where` (SQL over `mail.table`, already scoped to an account when
    one is meant) with `seq` <= `upto` (None: the newest now), CHUNK at a time; `prepare(tx)` runs
    first in each chunk (the search index catch-up). Returns how many were deleted."""
    deleted = 0
    if upto is None:
        async with emu.transaction(account) as tx:
            top = await tx.one(f"SELECT max(seq) AS seq FROM {mail.table}")
        upto = top["seq"] if top and top["seq"] is not None else 0
    below = upto + 1
    while True:
        async with emu.transaction(account) as tx:
            if prepare is not None:
                await prepare(tx)
            # A search's windows let other transactions in before the chunk writes (windows.py).
            rows = await windows.rows(tx, mail.table, where, params, "seq, id", limit=CHUNK, beyond=below)
            deleted += await remove(tx, mail, [row["id"] for row in rows])
            if account is not None:
                notify(tx, mail.box)  # open lists of this account refresh
        if len(rows) < CHUNK:
            return deleted
        below = rows[-1]["seq"]  # every match above it is in this chunk, deleted
