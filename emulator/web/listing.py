"""The outbox and received lists: filters, keyset pages over `seq`, rows shaped for the templates.

Pages seek by `seq` (never OFFSET), so the first and the thousandth page cost the same at 100 000
emails. Both lists take the search language of control/query.py: sent mail over its FTS5 index
(control/search.py), received mail, a smaller table without an index, by scans (control/mailsearch.py).
Counts are exact (issue 39): all mail and unread mail are kept per account (control/counts.py); a
search's matches are counted in windows of `seq` (control/windows.py `count`), on the page while that
takes under COUNT_BUDGET, and otherwise by the count route (counting.py) that the page then asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from emulator.control import counts, labels, mailsearch, reads, windows
from emulator.control.outbox import STATUSES, OutboxFilter
from emulator.control.search import index_new_mail
from emulator.core.typed import whole_number_or_none
from emulator.web.render import UI

if TYPE_CHECKING:
    from collections.abc import Mapping

    from emulator.core.db import Row, Tx

PAGE_SIZE = 50


@dataclass(frozen=True)
class Box:
    """One list the UI shows: sent mail (emails) or received mail (received_emails)."""

    name: str
    table: str
    attachments: str
    url: str
    has_status: bool


SENT = Box("outbox", "emails", "email_attachments", f"{UI}/messages", True)
RECEIVED = Box("received", "received_emails", "received_attachments", f"{UI}/received", False)


@dataclass(frozen=True)
class Filters:
    q: str = ""
    status: str = ""
    tag: str = ""
    older_than: int | None = None
    newer_than: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.q or self.status or self.tag)

    def params(self, **cursor: int) -> dict[str, str]:
        base = {"q": self.q, "status": self.status, "tag": self.tag}
        return {k: str(v) for k, v in {**base, **cursor}.items() if v}

    @property
    def query(self) -> str:
        params = self.params()
        return f"?{urlencode(params)}" if params else ""


def parse_filters(query: Mapping[str, str]) -> Filters:
    status = query.get("status", "").strip()
    return Filters(
        q=query.get("q", "").strip()[:200],
        status=status if status in STATUSES else "",
        tag=query.get("tag", "").strip()[:200],
        older_than=whole_number_or_none(query.get("older_than")),
        newer_than=whole_number_or_none(query.get("newer_than")),
    )


def _where(box: Box, filters: Filters, account: str) -> tuple[list[str], list[Any]]:
    clauses, params = ["account = ?"], [account]
    if box.has_status:
        # Status, tag and search mean what they mean in the outbox JSON API (control/outbox.py).
        name, sep, value = filters.tag.partition(":")
        outbox_filter = OutboxFilter(account=account, status=filters.status or None,
                                     tag_name=name.strip() or None,
                                     tag_value=value.strip() if sep else None, search=filters.q or None)
        sql, outbox_params = outbox_filter.where()
        return [sql], outbox_params
    if filters.q:
        sql, search_params = mailsearch.where(mailsearch.RECEIVED, filters.q)
        clauses.append(sql)
        params += search_params
    return clauses, params


def list_where(box: Box, filters: Filters, account: str) -> tuple[str, list[Any]]:
    """SQL over `box.table` for the account's emails these filters show (every page of them)."""
    clauses, params = _where(box, filters, account)
    return " AND ".join(f"({clause})" for clause in clauses), params


async def prepare_search(tx: Tx, box: Box, filters: Filters) -> None:
    """Before a searched list's statements: sent mail's index catches up; received mail, with no index,
    is scanned; either way the statements run off the loop (control/search.py, control/mailsearch.py)."""
    if filters.q:
        await (index_new_mail if box.has_status else mailsearch.scan_off_loop)(tx)


@dataclass
class ListPage:
    rows: list[dict[str, Any]]
    older_url: str | None
    newer_url: str | None
    first_page: bool
    total: int | None = None  # all mail, or the search's matches; None: not counted yet (or no list)
    upto: int = 0  # the highest `seq` the total counts: an action on "these N" acts on no newer mail


def _columns(box: Box) -> str:
    read = reads.read_test(box.name, box.table, True)
    common = f"seq, id, from_addr, to_addrs, cc, subject, created_at, {read} AS is_read"
    return common + (", last_event, scheduled_at, tags" if box.has_status else "")


async def _fetch(tx: Tx, box: Box, filters: Filters) -> tuple[list[Row], bool]:
    clauses, params = _where(box, filters, tx.account)
    await prepare_search(tx, box, filters)
    newer = filters.newer_than is not None
    cursor = filters.newer_than if newer else filters.older_than
    rows = await windows.rows(tx, box.table, " AND ".join(clauses), params, _columns(box),
                              limit=PAGE_SIZE + 1, newest_first=not newer, beyond=cursor)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    if newer:
        rows.reverse()
    return rows, more


async def _attachment_counts(tx: Tx, box: Box, ids: list[str]) -> dict[str, int]:
    if not ids:
        return {}
    marks = ",".join("?" for _ in ids)
    found = await tx.all(
        f"SELECT email_id, count(*) AS n FROM {box.attachments} "
        f"WHERE account = ? AND email_id IN ({marks}) GROUP BY email_id", [tx.account, *ids])
    return {row["email_id"]: row["n"] for row in found}


def _json_list(raw: str | None) -> list[Any]:
    value = json.loads(raw) if raw else []
    return value if isinstance(value, list) else []


def list_row(box: Box, row: Row, attachments: int = 0) -> dict[str, Any]:
    return {
        "id": row["id"], "seq": row["seq"], "url": f"{box.url}/{row['id']}",
        "from": row["from_addr"], "to": _json_list(row["to_addrs"]), "cc": _json_list(row.get("cc")),
        "subject": row["subject"] or "",
        "created_at": row["created_at"], "status": row.get("last_event"),
        "scheduled_at": row.get("scheduled_at"), "tags": _json_list(row.get("tags")),
        "attachments": attachments, "read": bool(row.get("is_read")),
    }


# A search's matches are counted on the page itself while that takes at most this long (wall time, the
# loop free throughout); past it the page says "counting…" and asks the count route (counting.py).
COUNT_BUDGET = 0.1


async def count(tx: Tx, box: Box, filters: Filters, budget: float | None = None) -> tuple[int | None, int]:
    """(how many emails the list holds or the search matches, the highest `seq` counted): kept counts
    without a filter, a windowed count with one; None for the number when `budget` ran out first."""
    if not filters.active:
        top = await tx.one(f"SELECT max(seq) AS seq FROM {box.table} WHERE account = ?", (tx.account,))
        high = int(top["seq"]) if top and top["seq"] is not None else 0
        return (await counts.of(tx, box.name)).total, high
    clauses, params = _where(box, filters, tx.account)
    await prepare_search(tx, box, filters)
    return await windows.count(tx, box.table, " AND ".join(clauses), params, budget=budget)


async def totals(tx: Tx, box: Box) -> counts.Counts:
    """All of the account's mail in this list, and how much of it is unread: kept, never counted."""
    return await counts.of(tx, box.name)


async def list_page(tx: Tx, box: Box, filters: Filters, base_url: str) -> ListPage:
    rows, more = await _fetch(tx, box, filters)
    counts = await _attachment_counts(tx, box, [row["id"] for row in rows])
    labelled = await labels.labels_for(tx, [row["id"] for row in rows]) if box is SENT else {}
    shaped = [list_row(box, row, counts.get(row["id"], 0)) for row in rows]
    for row in shaped:
        row["url"] += filters.query  # the message view steps through this same list (stepping.py)
        row["labels"] = labelled.get(row["id"], [])
    going_newer = filters.newer_than is not None
    has_older = more if not going_newer else bool(shaped)
    has_newer = (more if going_newer else filters.older_than is not None) and bool(shaped)
    older = f"{base_url}?{urlencode(filters.params(older_than=shaped[-1]['seq']))}" \
        if has_older and shaped else None
    newer = f"{base_url}?{urlencode(filters.params(newer_than=shaped[0]['seq']))}" if has_newer else None
    whole = filters.older_than is None and filters.newer_than is None and not more
    if whole:  # one page holds them all
        return ListPage(shaped, older, newer, not has_newer, len(shaped), shaped[0]["seq"] if shaped else 0)
    total, upto = await count(tx, box, filters, COUNT_BUDGET)
    return ListPage(shaped, older, newer, not has_newer, total, upto)
