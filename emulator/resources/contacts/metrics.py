"""GET /segments/metrics: live contact counts, in total and per segment ([docs] get-segment-metrics,
private beta; the Node SDK's types agree with the docs' response).

Comma-separated (or repeated) lists: `metrics` ⊆ all_contacts, subscribers, unsubscribers (omitted: all),
`dimensions` ⊆ segment, `filter[segment_id]` (also plain `segment_id`) narrows totals and rows to those
segments, counting a contact once however many of them it is in. `sort_by` (`date` or a metric) and
`sort_order` (`desc` by default) order the per-segment rows. The real service caches the counts for up
to 15 minutes; the emulator answers from the current state (a cache that is always fresh).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core.errors import invalid
from emulator.resources.contacts.segments import NOT_FOUND
from emulator.resources.contacts.store import require_segment

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

    from emulator.core.db import Row, Tx

METRICS = ("all_contacts", "subscribers", "unsubscribers")
DIMENSIONS = ("segment",)
SORT_BY = ("date", *METRICS)
SORT_ORDER = ("asc", "desc")
# Each metric as a SQL aggregate over contact rows `c`.
SQL = {"all_contacts": "COUNT(c.id)", "subscribers": "COALESCE(SUM(c.unsubscribed = 0), 0)",
       "unsubscribers": "COALESCE(SUM(c.unsubscribed = 1), 0)"}


def _listed(query: QueryParams, name: str, allowed: tuple[str, ...] | None) -> list[str]:
    values = [part.strip() for raw in query.getlist(name) for part in raw.split(",") if part.strip()]
    if allowed is not None:
        for value in values:
            if value not in allowed:
                options = ", ".join(f"`{choice}`" for choice in allowed)
                raise invalid(f"Invalid `{name}` parameter. Must be one of: {options}.")
    return list(dict.fromkeys(values))


def _counts(row: Row, metrics: list[str]) -> dict[str, int]:
    return {metric: int(row[metric]) for metric in metrics}


def _one(query: QueryParams, name: str, allowed: tuple[str, ...], default: str) -> str:
    values = _listed(query, name, allowed)
    return values[0] if values else default


async def segment_metrics(tx: Tx, query: QueryParams) -> dict[str, Any]:
    metrics = _listed(query, "metrics", METRICS) or list(METRICS)
    dimensions = _listed(query, "dimensions", DIMENSIONS)
    sort_by = _one(query, "sort_by", SORT_BY, "date")
    sort_order = _one(query, "sort_order", SORT_ORDER, "desc")
    segment_ids = _listed(query, "filter[segment_id]", None) + _listed(query, "segment_id", None)
    for segment_id in segment_ids:
        await require_segment(tx, segment_id, NOT_FOUND)
    columns = ", ".join(f"{SQL[metric]} AS {metric}" for metric in metrics)
    if segment_ids:
        marks = ", ".join("?" for _ in segment_ids)
        totals = await tx.one(
            f"SELECT {columns} FROM contacts c WHERE c.account = ? AND c.id IN (SELECT contact_id FROM"
            f" segment_contacts WHERE account = ? AND segment_id IN ({marks}))",
            (tx.account, tx.account, *segment_ids))
    else:
        totals = await tx.one(f"SELECT {columns} FROM contacts c WHERE c.account = ?", (tx.account,))
    assert totals is not None
    # The docs' example answers `object: "metrics"` with only these four keys; `sort_by`/`sort_order` are
    # accepted as query parameters but not echoed back.
    body: dict[str, Any] = {"object": "metrics", "metrics": metrics, "dimensions": dimensions,
                            "totals": _counts(totals, metrics)}
    if "segment" in dimensions:
        rows = await _per_segment(tx, columns, metrics, segment_ids)
        key = "seq" if sort_by == "date" else sort_by
        rows.sort(key=lambda row: (row[key], row["seq"]), reverse=sort_order == "desc")
        body["data"] = [{"id": row["id"], "name": row["name"], **_counts(row, metrics)}
                        for row in rows]
    return body


async def _per_segment(tx: Tx, columns: str, metrics: list[str], only: list[str]) -> list[Row]:
    """Each segment's counts (the chosen segments, else all); a metric sort needs its column."""
    sort_columns = ", ".join(f"{SQL[metric]} AS {metric}" for metric in METRICS if metric not in metrics)
    where, params = "s.account = ?", [tx.account]
    if only:
        where += f" AND s.id IN ({', '.join('?' for _ in only)})"
        params += only
    return await tx.all(
        f"SELECT s.seq, s.id, s.name, {columns}{', ' + sort_columns if sort_columns else ''} FROM segments s"
        " LEFT JOIN segment_contacts sc ON sc.account = s.account AND sc.segment_id = s.id"
        " LEFT JOIN contacts c ON c.account = sc.account AND c.id = sc.contact_id"
        f" WHERE {where} GROUP BY s.seq", params)


async def http_metrics(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await segment_metrics(tx, req.query)


OPS = [Op("segments/metrics", "GET", "/segments/metrics", http_metrics)]
