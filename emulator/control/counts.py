"""How many emails each account has, sent and received, and how many of them are unread: kept, not
counted (issue 39). The UI showed "10000+" because counting was a scan; at 1 000 000 emails even the
capped scan cost tens of ms per page.

`mail_counts` holds one row per (box, account): `total` and `unread`. SQLite triggers on the mail
tables and on `mail_reads` keep it in step inside the very statement that changes them, so every path
that stores, deletes or marks mail — the API, SMTP, broadcasts, deletes, retention prunes, a reset's
wipe — moves the counters in the same transaction, with no code of its own to forget. An email is
unread when `mail_reads` has no row for its `seq` (reads.py); the triggers ask that table, so the order
in which a delete drops an email and its read mark does not matter, and a read mark without its email
(there should be none) counts for nothing. New mail is unread: its `seq` is new (AUTOINCREMENT), so no
read mark can name it yet.

A database made before the counters (a `--db` file, a snapshot) has the triggers added at open, and
its counters are built once (`ensure_built`), chunk by chunk of `seq`; the `meta` key MARK says they
are. Renaming accounts (core/accounts.py, issue 36) drops the mark, so they are built again.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

MARK = "mail_counts"  # meta key: present once the counters match the tables
BUILD_SPAN = 100_000  # seq values per statement while building: each statement a few tens of ms


class Box(NamedTuple):
    name: str  # mail_reads.box
    table: str


BOXES = (Box("outbox", "emails"), Box("received", "received_emails"))


def _unread_test(box: Box, seq: str) -> str:
    return f"NOT EXISTS (SELECT 1 FROM mail_reads r WHERE r.box = '{box.name}' AND r.seq = {seq})"


def _triggers(box: Box) -> list[str]:
    owner = f"(SELECT account FROM {box.table} WHERE seq = {{}}.seq)"
    return [
        f"""CREATE TRIGGER IF NOT EXISTS mail_counts_{box.name}_insert AFTER INSERT ON {box.table} BEGIN
            INSERT INTO mail_counts (box, account, total, unread) VALUES ('{box.name}', new.account, 1, 1)
            ON CONFLICT (box, account) DO UPDATE SET total = total + 1, unread = unread + 1;
        END""",
        f"""CREATE TRIGGER IF NOT EXISTS mail_counts_{box.name}_delete AFTER DELETE ON {box.table} BEGIN
            UPDATE mail_counts SET total = total - 1, unread = unread - {_unread_test(box, 'old.seq')}
            WHERE box = '{box.name}' AND account = old.account;
        END""",
        f"""CREATE TRIGGER IF NOT EXISTS mail_counts_{box.name}_read AFTER INSERT ON mail_reads
            WHEN new.box = '{box.name}' BEGIN
            UPDATE mail_counts SET unread = unread - 1
            WHERE box = '{box.name}' AND account = {owner.format('new')};
        END""",
        f"""CREATE TRIGGER IF NOT EXISTS mail_counts_{box.name}_unread AFTER DELETE ON mail_reads
            WHEN old.box = '{box.name}' BEGIN
            UPDATE mail_counts SET unread = unread + 1
            WHERE box = '{box.name}' AND account = {owner.format('old')};
        END""",
    ]


TABLES = [
    """CREATE TABLE IF NOT EXISTS mail_counts (
        box TEXT NOT NULL,
        account TEXT NOT NULL,
        total INTEGER NOT NULL,
        unread INTEGER NOT NULL,
        PRIMARY KEY (box, account)
    ) WITHOUT ROWID""",
    *(trigger for box in BOXES for trigger in _triggers(box)),
]


class Counts(NamedTuple):
    total: int
    unread: int


async def of(tx: Tx, box: str) -> Counts:
    """The account's counts for one box (`outbox` or `received`): one row read, whatever the size."""
    row = await tx.one("SELECT total, unread FROM mail_counts WHERE box = ? AND account = ?",
                       (box, tx.account))
    return Counts(int(row["total"]), int(row["unread"])) if row else Counts(0, 0)


# ---- building -----------------------------------------------------------------------------------

def _count_span(raw: sqlite3.Connection, box: Box, low: int, high: int,
                into: dict[str, list[int]]) -> None:
    rows = raw.execute(
        f"SELECT account, count(*) AS total, sum({_unread_test(box, 'e.seq')}) AS unread"
        f" FROM {box.table} e WHERE e.seq BETWEEN ? AND ? GROUP BY account", (low, high)).fetchall()
    for row in rows:
        counted = into.setdefault(row["account"], [0, 0])
        counted[0] += int(row["total"])
        counted[1] += int(row["unread"] or 0)


def build(raw: sqlite3.Connection) -> None:
    """Count every box afresh into `mail_counts` (one transaction, statements of BUILD_SPAN seqs)."""
    raw.execute("BEGIN IMMEDIATE")
    try:
        raw.execute("DELETE FROM mail_counts")
        for box in BOXES:
            edges = raw.execute(f"SELECT (SELECT min(seq) FROM {box.table}) AS lo,"  # each one index end
                                f" (SELECT max(seq) FROM {box.table}) AS hi").fetchone()
            counted: dict[str, list[int]] = {}
            low = edges["lo"]
            while low is not None and low <= edges["hi"]:
                _count_span(raw, box, low, low + BUILD_SPAN - 1, counted)
                low += BUILD_SPAN
            raw.executemany("INSERT INTO mail_counts (box, account, total, unread) VALUES (?, ?, ?, ?)",
                            [(box.name, account, n[0], n[1]) for account, n in counted.items()])
        raw.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (MARK,))
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")


def ensure_built(raw: sqlite3.Connection) -> bool:
    """Build the counters when the database does not say they are kept (an older file or snapshot, or
    renamed accounts); whether it built them."""
    if raw.execute("SELECT 1 FROM meta WHERE key = ?", (MARK,)).fetchone() is not None:
        return False
    build(raw)
    return True


async def start(emu: Emulator) -> None:
    """At open: a database from before the counters gets them (snapshots.py does so after a restore)."""
    async with emu.db.exclusive():
        await emu.db.call(ensure_built)
