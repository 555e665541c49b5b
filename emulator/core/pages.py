"""Cursor pagination (reference 00-general.md §4, seed §4.5 / §7.1).

Lists are ordered newest first by insertion order (`seq`), which is creation order on the clock;
cursors are object ids, looked up to their `seq` and never included in the page (keyset seek, so a
page costs the same at 1 000 or 1 000 000 rows).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.core.errors import ApiError, invalid

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from emulator.core.db import Row, Tx

# The seed's example (reference 00-general §3, seed §7.1) and the pagination docs link this page; the
# inbox API's documented errors link the API reference's copy instead (reference/inboxes.md).
DOCS = "See https://resend.com/docs/pagination for more information."
INBOX_DOCS = "See https://resend.com/docs/api-reference/pagination for more information."
LIMIT_TEXT = "The pagination limit must be a number between 1 and 100."
BOTH_CURSORS_TEXT = "You can only pass one of `before` or `after` for pagination."
BAD_CURSOR_TEXT = "The pagination cursor references an object that does not exist."
LIMIT_MESSAGE = f"{LIMIT_TEXT} {DOCS}"
BOTH_CURSORS_MESSAGE = f"{BOTH_CURSORS_TEXT} {DOCS}"
BAD_CURSOR_MESSAGE = f"{BAD_CURSOR_TEXT} {DOCS}"
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DEFAULT_LIMIT = 20


class Page(NamedTuple):
    limit: int | None
    after: str | None = None
    before: str | None = None


def parse_page(query: Mapping[str, str], optional_limit: bool, uuid_cursors: bool = False,
               docs: str = DOCS) -> Page:
    """Read `limit`/`after`/`before`. With `optional_limit`, an absent limit means "all" (rule 3).
    `docs` is the sentence that closes each refusal's message."""
    after, before = query.get("after"), query.get("before")
    if after is not None and before is not None:
        raise invalid(f"{BOTH_CURSORS_TEXT} {docs}")
    raw_limit = query.get("limit")
    limit: int | None = None if optional_limit else DEFAULT_LIMIT
    if raw_limit is not None:
        digits = raw_limit.strip()  # str.strip() also drops control characters that int() refuses
        if not re.fullmatch(r"[0-9]{1,4}", digits) or not 1 <= int(digits) <= 100:
            raise invalid(f"{LIMIT_TEXT} {docs}")
        limit = int(digits)
    for cursor in (after, before):
        if cursor is not None and (not cursor or (uuid_cursors and not UUID.match(cursor))):
            raise invalid(f"{BAD_CURSOR_TEXT} {docs}")
    return Page(limit, after, before)


async def fetch_page(tx: Tx, table: str, page: Page, where: str = "account = ?",
                     params: Sequence[Any] | None = None, columns: str = "*", *, order: str = "seq",
                     oldest_first: bool = False,
                     unknown_cursor: ApiError | None = None) -> tuple[list[Row], bool]:
    """Rows of `table` matching `where` by the integer column `order`, newest first (`after` → older,
    `before` → newer) or `oldest_first` (`after` → newer, `before` → older), and whether more lie beyond
    the page. A cursor outside the selection raises `unknown_cursor` (default: the 422 above)."""
    base_params = list(params) if params is not None else [tx.account]
    cursor = page.after or page.before
    seek, descending = "", not oldest_first
    seek_params: list[Any] = []
    if cursor is not None:
        row = await tx.one(f"SELECT {order} FROM {table} WHERE ({where}) AND id = ?",
                           [*base_params, cursor])
        if row is None:
            raise unknown_cursor or invalid(BAD_CURSOR_MESSAGE)
        descending = (page.after is not None) != oldest_first
        seek = f"AND {order} < ?" if descending else f"AND {order} > ?"
        seek_params = [row[order]]
    limit_sql = "" if page.limit is None else f"LIMIT {page.limit + 1}"
    rows = await tx.all(
        f"SELECT {columns} FROM {table} WHERE ({where}) {seek} ORDER BY {order}"
        f" {'DESC' if descending else 'ASC'} {limit_sql}",
        [*base_params, *seek_params],
    )
    has_more = page.limit is not None and len(rows) > page.limit
    rows = rows[: page.limit] if page.limit is not None else rows
    if descending == oldest_first:  # walked against the list's order: turn the page round
        rows.reverse()
    return rows, has_more


def list_body(data: list[Any], has_more: bool) -> dict[str, Any]:
    return {"object": "list", "has_more": has_more, "data": data}
