"""The substring index of sent mail (issue 39): an SQLite FTS5 `trigram` table, `emails_text`.

Every three characters of a field are a token, so any term of three characters or more is looked up
as a phrase of its trigrams: `elcome` finds "Welcome", `注文` inside a Japanese subject, `report.csv`
an attachment's name. The index holds text folded by core/fold.py (case and accents set aside), the
query is folded the same way. What it holds, per email (rowid = `emails.seq`): the sender, the To, Cc,
Bcc and Reply-To addresses (names included), the subject, the attachments' file names, and the first
BODY_CHARS characters of the text body (the HTML when there is none): the body is the bulk of the
index, and mail past 16 KB of text is rare; a term found only past it is not found by the index.

It is caught up in chunks, never by the send itself (issue 18: an insert trigger cost each send
~45-60 µs with a word index; trigrams cost more): rows whose seq is above the highest indexed are
added by each search before it reads (`index_new_mail`), and by a background task at start (a database
file from an older build is indexed then) and every PERIOD seconds while new mail waits. Each chunk is
its own short transaction, committed apart and sized to take about windows.WINDOW_SECONDS, so nothing
holds the database long (issue 36 measured a whole 50 MB index build at 3.1 s in one statement), and a
build cut short (kill -9) goes on from the highest indexed row. `emails.seq` only grows
(AUTOINCREMENT), so "above the highest indexed" is exactly "not yet indexed". Indexed fields never
change after insert (the generated text part, stored later, is made of the HTML's own words); a delete
trigger takes a deleted email out, whichever way it went (UI, retention prune, reset, cancel).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from emulator.control import windows
from emulator.core.fold import SQL_NAME as FOLD

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

log = logging.getLogger("emulator")
TABLE = "emails_text"
BODY_CHARS = 16_384
PERIOD = 1.0  # seconds of real time between the background task's looks for unindexed mail
COLUMNS = ("sender", "recipients", "cc", "bcc", "reply_to", "subject", "body", "files")


def _listed(column: str) -> str:
    """A JSON list of addresses as text, each address whole (`["Søren <s@x>"]` → `Søren <s@x>`)."""
    return (f"CASE WHEN json_valid({column}) THEN (SELECT group_concat(value, ' ') FROM json_each({column}))"
            f" ELSE {column} END")


_FILES = "(SELECT group_concat(filename, ' ') FROM email_attachments a WHERE a.email_id = emails.id)"
_VALUES = ["from_addr", *(_listed(c) for c in ("to_addrs", "cc", "bcc", "reply_to")), "subject",
           f"substr(coalesce(text, html, ''), 1, {BODY_CHARS})", _FILES]
TABLES = [
    # The word index of issue 18 (whole words by prefix), and its delete trigger, replaced by this one.
    "DROP TRIGGER IF EXISTS emails_fts_insert",
    "DROP TRIGGER IF EXISTS emails_fts_delete",
    "DROP TABLE IF EXISTS emails_fts",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5({', '.join(COLUMNS)},
        tokenize = 'trigram', columnsize = 0)""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON emails BEGIN
        DELETE FROM {TABLE} WHERE rowid = old.seq;
    END""",
]


def _folded(value: str) -> str:
    """`value` folded: ASCII text (its length in bytes is its length in characters) by SQLite's own
    `lower`, in C; other text by core/fold.py. A Python call per field of every row would take the GIL
    from the event loop hundreds of thousands of times a second while the index builds (measured: the
    loop held 0.24 s at a time building 100 000 emails; with ASCII in C, see the benchmark)."""
    return (f"CASE WHEN length(CAST(({value}) AS BLOB)) = length({value}) THEN lower({value})"
            f" ELSE {FOLD}({value}) END")


_HIGHEST = f"coalesce((SELECT rowid FROM {TABLE} ORDER BY rowid DESC LIMIT 1), 0)"
_INDEX_NEW = f"""INSERT INTO {TABLE} (rowid, {', '.join(COLUMNS)})
    SELECT seq, {', '.join(_folded(value) for value in _VALUES)} FROM emails
    WHERE seq > {_HIGHEST} ORDER BY seq LIMIT ?"""
_BEHIND = f"SELECT EXISTS (SELECT 1 FROM emails WHERE seq > {_HIGHEST}) AS behind"


async def index_new_mail(tx: Tx) -> None:
    """Index the mail stored since the last catch-up, a chunk at a time, each committed apart (before
    the search's own transaction writes: `Tx.write_apart`), with others' transactions between chunks;
    then the search's statements run off the loop too (a scan can take a while)."""
    tx.scan_off_loop()
    rows = windows.FIRST_SPAN
    while True:
        began = time.perf_counter()
        added = await tx.write_apart(_INDEX_NEW, (rows,))
        if added < rows:
            return
        rows = windows.next_span(rows, time.perf_counter() - began)
        await tx.let_others_in()


async def _catch_up(emu: Emulator) -> None:
    async with emu.transaction() as tx:
        tx.scan_off_loop()
        behind = await tx.scan(_BEHIND)
        if behind[0]["behind"]:
            await index_new_mail(tx)


async def _loop(emu: Emulator) -> None:
    while True:
        try:
            await _catch_up(emu)
        except Exception:  # tried again on the next round; a search catches up by itself anyway
            log.exception("indexing sent mail for search failed")
        await asyncio.sleep(PERIOD)


async def start(emu: Emulator) -> None:
    emu.state["mailindex_task"] = asyncio.create_task(_loop(emu))


async def stop(emu: Emulator) -> None:
    task = emu.state.pop("mailindex_task", None)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
