"""Searches that scan stored mail, in windows of `seq` (issue 36: one search held the database 1–2 s).

A search whose SQL tests substrings (core/substring.py: it reads every row's text, where an index
lookup reads only what it finds) walks its table in windows of `seq`, newest first or oldest first,
from the table's highest `seq` as the walk began. Each window is one statement run off the loop; between
windows the transactions waiting for the database run (`Tx.let_others_in`). A window's span adapts to
what the last one cost, aiming at WINDOW_SECONDS: a few rows of half-megabyte bodies, thousands of small
ones. The rows found are those one `ORDER BY seq LIMIT n` statement over the table would have found;
mail that arrives during the walk is not among them, as it would not have been a moment earlier.

Chosen over an FTS5 `trigram` index, by measurement (2026-11-29, SQLite 3.40, this machine): indexing
50 MB of bodies took 3.1 s and 75 MB; a 200-character `aaa…b` term took 0.5 s, and a 2 KB one 8.4 s,
against one 500 KB `aaa…ab` body, in the index's own phrase match (C code, one statement: no window
can bound it). Windows over the linear scan (benchmarks/bench_search.py, 50 MB of received bodies): a
small request waits ≤ ~40–70 ms behind a search, where it waited for the whole search (0.34–0.64 s,
up to ~2 s on a loaded machine) before.

Issue 39 then took a trigram index (control/mailindex.py) on the terms that answer both: it is built in
chunks apart from any search, holds only what is searched (the body cut to 16 KB), and is asked for at
most 64 characters of a term (a longer one is then checked on its candidates by the scan). Its lookups
walk in windows too: a search's index subquery carries INDEX_WINDOW, an SQL comment that each window
replaces with its `rowid` range, so a term found in a million emails costs a page's worth of rows, not
a million (outside a walk the comment is just that: no bound).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from emulator.core import substring
from emulator.core.errors import invalid
from emulator.core.pages import BAD_CURSOR_MESSAGE, Page, fetch_page

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

# The database is held ~this long per window: other requests wait about that. Each window also costs a
# thread hop, a few ms on a loaded machine (2026-11-29, a 200-character search of 50 MB received mail:
# 0.02 s made it ~35% slower than one statement, small reads waiting <= ~40 ms; 0.035 s ~10-20% and
# <= ~70 ms; 0.1 s waits of ~200 ms).
WINDOW_SECONDS = 0.03
FIRST_SPAN = 2  # seq values in the first window: 1 MB of half-megabyte bodies; it grows from there
GROWTH = 4  # a window at most this many times the last one's span
INDEX_WINDOW = "/*window*/"
# A count that reads no bodies (an index, columns) starts wider: its rows cost ~1-15 µs each, not ~1 ms.
# It grows no faster than a scan's windows: a row's cost varies tenfold with what SQLite's cache holds
# (1 M emails in a file, 2026-11-29: a span grown 30x from a cached window took 1.5 s).
COUNT_FIRST_SPAN = 4_096


def scans(where: str) -> bool:
    """Whether `where` tests substrings (reads every row it is asked about) or looks up the index."""
    return substring.SQL_NAME in where or INDEX_WINDOW in where


def bounded(sql: str, start: int, end: int) -> str:
    """`sql` with its index lookups kept to the rowids from `start` to `end`."""
    return sql.replace(INDEX_WINDOW, f"AND rowid BETWEEN {int(start)} AND {int(end)}")


def next_span(span: int, elapsed: float) -> int:
    """The span that should take about WINDOW_SECONDS, from one that took `elapsed`."""
    return max(1, min(span * GROWTH, int(span * WINDOW_SECONDS / max(elapsed, 1e-6))))


async def _edges(tx: Tx, table: str) -> Row:
    """The table's lowest and highest `seq`. Two subqueries: SQLite reads one end of the index for a
    lone min() or max(), but the whole table for both in one SELECT (82 ms at 1 000 000 emails)."""
    ends = f"SELECT (SELECT min(seq) FROM {table}) AS lo, (SELECT max(seq) FROM {table}) AS hi"
    return (await tx.scan(ends))[0]


async def rows(tx: Tx, table: str, where: str, params: list[Any], columns: str = "seq", *,
               limit: int | None, newest_first: bool = True, beyond: int | None = None) -> list[Row]:
    """The first `limit` (None: all) rows of `table` matching `where`, in `seq` order (newest first, or
    oldest first), those past `beyond` (a seq, not included) only."""
    order = "DESC" if newest_first else "ASC"
    if not scans(where):
        seek = "" if beyond is None else f" AND seq {'<' if newest_first else '>'} {int(beyond)}"
        cap = "" if limit is None else f" LIMIT {limit}"
        return await tx.all(f"SELECT {columns} FROM {table} WHERE ({where}){seek} ORDER BY seq {order}{cap}",
                            params)
    tx.scan_off_loop()
    edges = await _edges(tx, table)
    if edges["lo"] is None:
        return []
    low, high = int(edges["lo"]), int(edges["hi"])
    if beyond is not None:
        low, high = (low, min(high, beyond - 1)) if newest_first else (max(low, beyond + 1), high)
    return await _walk(tx, f"SELECT {columns} FROM {table} WHERE ({where}) AND seq BETWEEN ? AND ? "
                           f"ORDER BY seq {order}", params, (low, high), limit, newest_first)


async def _walk(tx: Tx, sql: str, params: list[Any], edges: tuple[int, int], limit: int | None,
                newest_first: bool) -> list[Row]:
    low, high = edges
    found: list[Row] = []
    span = FIRST_SPAN
    while low <= high and (limit is None or len(found) < limit):
        start, end = (max(low, high - span + 1), high) if newest_first else (low, min(high, low + span - 1))
        cap = "" if limit is None else f" LIMIT {limit - len(found)}"
        began = time.perf_counter()
        found += await tx.scan(bounded(sql, start, end) + cap, [*params, start, end])
        span = next_span(span, time.perf_counter() - began)
        high, low = (start - 1, low) if newest_first else (high, end + 1)
        if low <= high:
            await tx.let_others_in()
    return found


async def _cursor_seq(tx: Tx, table: str, where: str, params: list[Any], cursor: str) -> int:
    """The seq of the page's cursor row, which must be one the search finds."""
    row = await tx.scan(f"SELECT seq FROM {table} WHERE id = ?", [cursor])
    seq = int(row[0]["seq"]) if row else 0
    if not row or not await tx.scan(f"SELECT 1 FROM {table} WHERE ({bounded(where, seq, seq)}) AND seq = ?",
                                    [*params, seq]):
        raise invalid(BAD_CURSOR_MESSAGE)
    return seq


async def count(tx: Tx, table: str, where: str, params: list[Any], *, upto: int | None = None,
                budget: float | None = None) -> tuple[int | None, int]:
    """The exact number of rows of `table` matching `where` with `seq` <= `upto` (None: the highest
    `seq` now), and that bound. Counted in windows of `seq`, newest first, each about WINDOW_SECONDS,
    off the loop, other transactions let in between (issue 39: a search's match count at 1 000 000
    emails). None instead of the number when it would take more than `budget` seconds of wall time. Rows a
    transaction let in between windows deletes or changes below the window under way may be counted as
    they were; mail stored after the count began is never counted."""
    tx.scan_off_loop()
    edges = await _edges(tx, table)
    high = int(edges["hi"] or 0) if upto is None else upto
    if edges["lo"] is None:
        return 0, high
    low, top, found = int(edges["lo"]), min(high, int(edges["hi"])), 0
    span, began = (FIRST_SPAN if scans(where) else COUNT_FIRST_SPAN), time.perf_counter()
    sql = f"SELECT count(*) AS n FROM {table} WHERE ({where}) AND seq BETWEEN ? AND ?"
    last = 0.0  # the last window's time: the next is expected to take about as long
    while low <= top:
        if budget is not None and time.perf_counter() - began + last > budget:
            return None, high
        start, window = max(low, top - span + 1), time.perf_counter()
        # The search index is asked about this window's rows only, not the whole table each time.
        found += int((await tx.scan(bounded(sql, start, top), [*params, start, top]))[0]["n"])
        last = time.perf_counter() - window
        span, top = next_span(span, last), start - 1
        if low <= top:
            await tx.let_others_in()
    return found, high


async def page(tx: Tx, table: str, chosen: Page, where: str, params: list[Any],
               columns: str) -> tuple[list[Row], bool]:
    """One page of a newest-first list, as core/pages.py `fetch_page` reads it, through `rows` when
    `where` scans: `after` walks older, `before` newer."""
    if not scans(where):
        return await fetch_page(tx, table, chosen, where, params, columns=columns)
    cursor, beyond = chosen.after or chosen.before, None
    if cursor is not None:
        beyond = await _cursor_seq(tx, table, where, params, cursor)
    newer = chosen.before is not None
    limit = None if chosen.limit is None else chosen.limit + 1
    listed = await rows(tx, table, where, params, columns, limit=limit, newest_first=not newer, beyond=beyond)
    has_more = chosen.limit is not None and len(listed) > chosen.limit
    listed = listed[:chosen.limit] if chosen.limit is not None else listed
    if newer:
        listed.reverse()
    return listed, has_more
