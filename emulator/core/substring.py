"""A substring test for the search language, in time linear in the text searched (issue 36).

SQLite's `LIKE '%term%'` tries the pattern at every position of the text and, where the text repeats
the term's start (`aaaa…` against `aaa…b`), walks most of the term each time: a 4 KB term against one
500 KB body held the event loop 1.6 s, a 200-character one against 5 MB 0.9 s. Python's `in` on bytes
uses a two-way search for long needles, linear in the text: ~2–5 ms per MB whatever the input.

`contains(needle, field, …)` is registered on the connection (core/db.py) as the SQL function
`CONTAINS_TEXT`; it keeps LIKE's meaning: case-insensitive for ASCII letters only, NULL fields never
match. The caller passes the needle already lowered (`needle`). One call per row for all its fields
keeps the per-row cost of the Python call to ~1 µs. Long texts are searched in windows, so no single
C call holds the GIL for more than a few milliseconds (searches run off the loop: core/tx.py).
"""

from __future__ import annotations

import sqlite3

SQL_NAME = "CONTAINS_TEXT"
# Characters searched per call into C: ~1–4 ms each, so the loop thread waits at most that for the GIL.
WINDOW = 1 << 20


def needle(term: str) -> str:
    """The form `contains` takes its needle in: ASCII letters lowered, as LIKE compares them."""
    return term.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _found(lowered: bytes, length: int, text: str) -> bool:
    if len(text) <= WINDOW:
        return lowered in text.encode("utf-8", "surrogatepass").lower()
    # Windows overlap by the needle's length in characters, so a match across a seam is in the next one.
    for start in range(0, len(text), WINDOW):
        window = text[start:start + WINDOW + length - 1]
        if lowered in window.encode("utf-8", "surrogatepass").lower():
            return True
    return False


def contains(term: str | None, *fields: object) -> int:
    """1 when some text field holds `term` (as `needle` made it), else 0; NULL and non-text never match."""
    if not term:
        return 1
    lowered = term.encode("utf-8", "surrogatepass")
    return int(any(isinstance(field, str) and _found(lowered, len(term), field) for field in fields))


def register(raw: sqlite3.Connection) -> None:
    raw.create_function(SQL_NAME, -1, contains, deterministic=True)


def sql(columns: tuple[str, ...]) -> str:
    """The SQL test for one needle parameter against `columns`."""
    return f"{SQL_NAME}(?, {', '.join(columns)})"
