"""A substring test for the search language, in time linear in the text searched (issue 36).

SQLite's `LIKE '%term%'` tries the pattern at every position of the text and, where the text repeats
the term's start (`aaaa…` against `aaa…b`), walks most of the term each time: a 4 KB term against one
500 KB body held the event loop 1.6 s, a 200-character one against 5 MB 0.9 s. Python's `in` on bytes
uses a two-way search for long needles, linear in the text: ~2–5 ms per MB whatever the input.

`contains(needle, field, …)` is registered on the connection (core/db.py) as the SQL function
`CONTAINS_TEXT`; NULL fields never match. Case and accents do not count (issue 39): the caller passes
the needle folded (`needle`, core/fold.py) and each field is folded the same way: an ASCII field (most
mail) only lowered, in C; one with other characters folded in windows of NON_ASCII_WINDOW. One call
per row for all its fields keeps the per-row cost of the Python call to ~1 µs; fields come as bytes
(`CAST … AS BLOB`), which spares decoding a body to str only to lower and encode it again (~2x per
row). Long texts are searched in windows, so no C call holds the GIL for more than a few ms (searches
run off the loop: tx.py).
"""

from __future__ import annotations

import sqlite3

from emulator.core.fold import SQL_NAME as FOLD_NAME
from emulator.core.fold import fold, fold_sql

SQL_NAME = "CONTAINS_TEXT"
# Bytes searched per call into C: ~1–4 ms each, so the loop thread waits at most that for the GIL.
WINDOW = 1 << 20
# Folding non-ASCII text costs ~20-50 ns a character (normalisation, in C, holding the GIL): smaller windows.
NON_ASCII_WINDOW = 1 << 16
# A folded window may be shorter than its text (marks stripped) or longer (ß→ss): windows overlap by
# this many bytes per needle byte, so a match across a seam is whole in the next window.
_SEAM = 4


def needle(term: str) -> str:
    """The form `contains` takes its needle in: folded (core/fold.py), as every field is."""
    return fold(term)


def _folded(window: bytes) -> bytes:
    if window.isascii():
        return window.lower()
    # A window's edge may cut a character: its bytes are replaced, only at the seam that overlaps.
    return fold(window.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")


def _found(folded: bytes, field: bytes) -> bool:
    window = WINDOW if field.isascii() else NON_ASCII_WINDOW
    if len(field) <= window:
        return folded in _folded(field)
    # Windows overlap by the needle's length (times _SEAM), so a match across a seam is whole in the next.
    overlap = len(folded) * _SEAM
    return any(folded in _folded(field[start:start + window + overlap])
               for start in range(0, len(field), window))


def contains(term: str | None, *fields: object) -> int:
    """1 when some field (UTF-8 bytes: the SQL casts them) holds `term` as `needle` made it, else 0."""
    if not term:
        return 1
    folded = term.encode("utf-8", "surrogatepass")
    return int(any(isinstance(field, bytes) and _found(folded, field) for field in fields))


def register(raw: sqlite3.Connection) -> None:
    raw.create_function(SQL_NAME, -1, contains, deterministic=True)
    raw.create_function(FOLD_NAME, 1, fold_sql, deterministic=True)


def sql(columns: tuple[str, ...]) -> str:
    """The SQL test for one needle parameter against `columns`."""
    return f"{SQL_NAME}(?, {', '.join(f'CAST({column} AS BLOB)' for column in columns)})"
