"""Keyset pages over a table's `seq`, newest first, for the UI's growing logs (Logs, Webhooks).

Like the outbox (listing.py), a page seeks by `seq` and never counts an OFFSET, so the first and the
thousandth page of 100 000 rows cost the same; the links to the older and newer pages carry the page's
filters, so paging never loses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from emulator.core.typed import whole_number_or_none

if TYPE_CHECKING:
    from collections.abc import Mapping

    from emulator.core.db import Row, Tx


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: past `older_than` going older, or past `newer_than` going newer."""

    older_than: int | None = None
    newer_than: int | None = None


def cursor_of(query: Mapping[str, str]) -> Cursor:
    # Cursors come from the page's own links: anything else reads as "the newest page".
    return Cursor(whole_number_or_none(query.get("older_than")),
                  whole_number_or_none(query.get("newer_than")))


@dataclass
class Window:
    rows: list[Row]
    older_url: str | None
    newer_url: str | None


async def seek(tx: Tx, select: str, where: str, params: list[Any], *, seq: str, cursor: Cursor, size: int,
               link: tuple[str, dict[str, str]]) -> Window:
    """`size` rows of `select … WHERE where`, newest first, from `cursor`; `link` is the page's path and
    filters, which the older/newer links keep."""
    newer = cursor.newer_than is not None
    bound = cursor.newer_than if newer else cursor.older_than
    past = "" if bound is None else f" AND {seq} {'>' if newer else '<'} {int(bound)}"
    rows = await tx.all(f"{select} WHERE ({where}){past} ORDER BY {seq} {'ASC' if newer else 'DESC'}"
                        f" LIMIT {size + 1}", params)
    more = len(rows) > size
    rows = rows[:size]
    if newer:
        rows.reverse()
    has_older = (more if not newer else True) and bool(rows)
    has_newer = (more if newer else bound is not None) and bool(rows)
    path, filters = link
    older = f"{path}?{urlencode({**filters, 'older_than': rows[-1]['seq']})}" if has_older else None
    newer_url = f"{path}?{urlencode({**filters, 'newer_than': rows[0]['seq']})}" if has_newer else None
    return Window(rows, older, newer_url)
