"""Read state of sent and received mail, as a mail catcher keeps it: new mail is unread, opening it in
the UI reads it, and it can be marked read or unread again (one email, a selection, a search's results).

A row in `mail_reads` marks one email read; no row means unread. So mail that arrives by any path (API,
SMTP, broadcasts, scenarios, a database file from an older build) starts unread without the send path
paying for a row. Rows name the email by `seq` (never reused: AUTOINCREMENT), not by id: `seq` is in
the mail tables' (account, seq) index, so counting unread mail never reads the email rows themselves
(by id, the unread count read 10 000 full rows: ~25 ms at 100 000 emails). Deleting an email takes its
row with it (deletion.py). How many are unread is kept, not counted: control/counts.py.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from emulator.control import windows
from emulator.core.events import notify

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

Sql = tuple[str, list[Any]]

TABLES = [
    """CREATE TABLE IF NOT EXISTS mail_reads (
        box TEXT NOT NULL,
        seq INTEGER NOT NULL,
        account TEXT NOT NULL,
        read_at TEXT NOT NULL,
        PRIMARY KEY (box, seq)
    ) WITHOUT ROWID""",
]
CHUNK = 1_000
IN_LIST = "IN (SELECT value FROM json_each(?))"


def read_test(box: str, table: str, read: bool) -> str:
    """SQL that holds for the rows of `table` (sent or received mail) that are read (or unread)."""
    test = f"EXISTS (SELECT 1 FROM mail_reads r WHERE r.box = '{box}' AND r.seq = {table}.seq)"
    return test if read else f"NOT {test}"


async def mark(tx: Tx, box: str, table: str, ids: list[str], read: bool) -> int:
    """Mark these emails (callers scope `ids` to an account) read or unread; how many changed."""
    listed = json.dumps(ids)
    if read:
        sql = (f"INSERT OR IGNORE INTO mail_reads (box, seq, account, read_at) "
               f"SELECT ?, seq, account, ? FROM {table} WHERE id {IN_LIST}")
        return await tx.run(sql, (box, tx.now_db, listed))
    return await forget(tx, box, table, listed)


async def mark_where(emu: Emulator, box: str, table: str, account: str | None, where: Sql,
                     read: bool, prepare: Callable[[Tx], Awaitable[None]] | None = None) -> int:
    """Mark every email matching `where` read or unread, CHUNK at a time (each its own transaction)."""
    changed, below = 0, None
    while True:
        async with emu.transaction(account) as tx:
            if prepare is not None:
                await prepare(tx)
            rows = await windows.rows(tx, table, where[0], where[1], "seq, id", limit=CHUNK, beyond=below)
            changed += await mark(tx, box, table, [row["id"] for row in rows], read)
            if account is not None:
                notify(tx, box)  # open lists of this account refresh
        if len(rows) < CHUNK:
            return changed
        below = rows[-1]["seq"]


async def is_read(tx: Tx, box: str, table: str, email_id: str) -> bool:
    row = await tx.one(f"SELECT 1 AS yes FROM {table} WHERE id = ? AND {read_test(box, table, True)}",
                       (email_id,))
    return row is not None


async def forget(tx: Tx, box: str, table: str, listed: str) -> int:
    """Drop the read marks of these emails (`listed`: a JSON array of ids), before they are deleted."""
    return await tx.run(f"DELETE FROM mail_reads WHERE box = ? AND seq IN (SELECT seq FROM {table} "
                        f"WHERE id {IN_LIST})", (box, listed))
