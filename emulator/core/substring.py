"""A substring test for the search language, in time linear in the text searched (issue 36).

SQLite's `LIKE '%term%'` tries the pattern at every position of the text and, where the text repeats
the term's start (`aaaa…` against `aaa…b`), walks most of the term each time: a 4 KB term against one
500 KB body held the event loop 1.6 s, a 200-character one against 5 MB 0.9 s. Python's `in` on bytes
uses a two-way search for long needles, linear in the text: ~2–5 ms per MB whatever the input.

`contains(needle, field, …)` is registered on the connection (core/db.py) as the SQL function
`CONTAINS_TEXT`; it keeps LIKE's meaning: case-insensitive for ASCII letters only, NULL fields never
match. The caller passes the needle already lowered (`needle`). One call per row for all its fields
keeps the per-row cost of the Python call to ~1 µs; fields come as bytes (`CAST … AS BLOB`), which
spares decoding a body to str only to lower and encode it again (~2x per row). Long texts are
searched in windows, so no C call holds the GIL for more than a few ms (searches run off the loop: tx.py).
"""

from __future__ import annotations

import sqlite3

SQL_NAME = "CONTAINS_TEXT"
# Bytes searched per call into C: ~1–4 ms each, so the loop thread waits at most that for the GIL.
WINDOW = 1 << 20


def needle(term: str) -> str:
    """The form `contains` takes its needle in: ASCII letters lowered, as LIKE compares them."""
    return term.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _found(lowered: bytes, field: bytes) -> bool:
    if len(field) <= WINDOW:
        return lowered in field.lower()
    # Windows overlap by the needle's length, so a match across a seam is whole in the next window.
    return any(lowered in field[start:start + WINDOW + len(lowered) - 1].lower()
               for start in range(0, len(field), WINDOW))


def contains(term: str | None, *fields: object) -> int:
    """1 when some field (UTF-8 bytes: the SQL casts them) holds `term` as `needle` made it, else 0."""
    if not term:
        return 1
    lowered = term.encode("utf-8", "surrogatepass")
    return int(any(isinstance(field, bytes) and _found(lowered, field) for field in fields))


def register(raw: sqlite3.Connection) -> None:
    raw.create_function(SQL_NAME, -1, contains, deterministic=True)


def sql(columns: tuple[str, ...]) -> str:
    """The SQL test for one needle parameter against `columns`."""
    return f"{SQL_NAME}(?, {', '.join(f'CAST({column} AS BLOB)' for column in columns)})"
