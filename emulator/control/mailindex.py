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
change after insert (the generated text part, stored later, is made of the HTML's own words).

A deleted email, whichever way it went (UI, API, retention prune), leaves its seq in `emails_text_gone`
(a trigger: ~1 µs), and the index drops it in the same chunks, before any catch-up: a trigram row costs
~60 µs to take out (its stored text tokenized again), which made "delete all" 2.75x slower when the
delete trigger did it at once. A search never lists a deleted email meanwhile: it lists `emails` rows,
which the index only points at. A reset empties both tables.
The background task leaves mail alone while it flows (new mail since its last look), so a load test's
sends do not share the CPU with indexing (~36 µs an email): it indexes when the flow pauses, or at
least every BUSY_LOOKS looks; a search catches up whatever is left first.
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
BUSY_LOOKS = 10  # while mail flows, the background task still catches up every this many looks
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
    "DROP TRIGGER IF EXISTS emails_text_delete",  # the first cut of this index dropped rows at once
    f"CREATE TABLE IF NOT EXISTS {TABLE}_gone (seq INTEGER PRIMARY KEY)",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_forget AFTER DELETE ON emails BEGIN
        INSERT OR IGNORE INTO {TABLE}_gone (seq) VALUES (old.seq);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_purge AFTER DELETE ON {TABLE}_gone BEGIN
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
_PURGE = f"DELETE FROM {TABLE}_gone WHERE seq IN (SELECT seq FROM {TABLE}_gone ORDER BY seq LIMIT ?)"
_BEHIND = (f"SELECT (SELECT max(seq) FROM emails) AS newest, EXISTS (SELECT 1 FROM emails"
           f" WHERE seq > {_HIGHEST}) OR EXISTS (SELECT 1 FROM {TABLE}_gone) AS behind")


async def index_new_mail(tx: Tx) -> None:
    """Index the mail stored since the last catch-up, a chunk at a time, each committed apart (before
    the search's own transaction writes: `Tx.write_apart`), with others' transactions between chunks;
    then the search's statements run off the loop too (a scan can take a while)."""
    tx.scan_off_loop()
    for sql in (_PURGE, _INDEX_NEW):
        await _in_chunks(tx, sql)


async def _in_chunks(tx: Tx, sql: str) -> None:
    rows = windows.FIRST_SPAN
    while True:
        began = time.perf_counter()
        changed = await tx.write_apart(sql, (rows,))
        if changed < rows:
            return
        rows = windows.next_span(rows, time.perf_counter() - began)
        await tx.let_others_in()


async def _catch_up(emu: Emulator, last: int | None, looks: int) -> int | None:
    """One look: catch up unless mail is flowing (`newest` moved since the `last` look), at most
    BUSY_LOOKS looks apart. Returns the newest seq seen."""
    async with emu.transaction() as tx:
        tx.scan_off_loop()
        state = (await tx.scan(_BEHIND))[0]
        if state["behind"] and (state["newest"] == last or looks % BUSY_LOOKS == 0):
            await index_new_mail(tx)
        return state["newest"]  # type: ignore[no-any-return]


async def _loop(emu: Emulator) -> None:
    last: int | None = None
    looks = 0  # the first look, at start, indexes an older database file at once
    while True:
        try:
            last = await _catch_up(emu, last, looks)
        except Exception:  # tried again on the next round; a search catches up by itself anyway
            log.exception("indexing sent mail for search failed")
        looks += 1
        await asyncio.sleep(PERIOD)


async def start(emu: Emulator) -> None:
    emu.state["mailindex_task"] = asyncio.create_task(_loop(emu))


async def stop(emu: Emulator) -> None:
    task = emu.state.pop("mailindex_task", None)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
