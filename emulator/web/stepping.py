"""Next and previous inside a message: its neighbours in the list it was opened from (same filters, the
list's order: newest first by `seq`), so `j`/`k` on a message walk the list as they do on the list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.control import windows
from emulator.core.errors import ApiError
from emulator.web.listing import Box, Filters, _where, prepare_search

if TYPE_CHECKING:
    from emulator.core.db import Tx


async def _neighbour(tx: Tx, box: Box, filters: Filters, seq: int, newer: bool) -> str | None:
    clauses, params = _where(box, filters, tx.account)
    found = await windows.rows(tx, box.table, " AND ".join(clauses), params, "id", limit=1,
                               newest_first=not newer, beyond=seq)
    return f"{box.url}/{found[0]['id']}{filters.query}" if found else None


async def neighbours(tx: Tx, box: Box, filters: Filters, seq: int) -> dict[str, str | None]:
    """The messages above (`newer`) and below (`older`) this one in its list, and the list's own query
    (`list_query`, for the way back). A search that is not valid (any more) steps through the whole list."""
    try:
        _where(box, filters, tx.account)
    except ApiError:
        filters = Filters()
    await prepare_search(tx, box, filters)
    return {"newer": await _neighbour(tx, box, filters, seq, newer=True),
            "older": await _neighbour(tx, box, filters, seq, newer=False), "list_query": filters.query}
