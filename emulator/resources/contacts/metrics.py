"""GET /segments/metrics: contact counts, in total and per segment (contacts.md §4, [docs] private beta).

`metrics` ⊆ all_contacts, subscribers, unsubscribers (omitted: all), `dimensions` ⊆ segment, `segment_id`
narrows to those segments; each list may be repeated or comma-separated. Totals count a contact once
however many of the chosen segments it is in; without `segment_id` they count every contact of the
account [recommendation]. The real service caches these for up to 15 minutes; the emulator answers
from the current state (a cache that is always fresh).
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


async def segment_metrics(tx: Tx, query: QueryParams) -> dict[str, Any]:
    metrics = _listed(query, "metrics", METRICS) or list(METRICS)
    dimensions = _listed(query, "dimensions", DIMENSIONS)
    segment_ids = _listed(query, "segment_id", None)
    segments = [await require_segment(tx, segment_id, NOT_FOUND) for segment_id in segment_ids]
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
    body: dict[str, Any] = {"object": "metrics", "metrics": metrics, "dimensions": dimensions,
                            "totals": _counts(totals, metrics)}
    if "segment" in dimensions:
        body["data"] = await _per_segment(tx, columns, metrics, [row["id"] for row in segments])
    return body


async def _per_segment(tx: Tx, columns: str, metrics: list[str], only: list[str]) -> list[dict[str, Any]]:
    """One item per segment (the chosen ones, else all), newest segment first."""
    where, params = "s.account = ?", [tx.account]
    if only:
        where += f" AND s.id IN ({', '.join('?' for _ in only)})"
        params += only
    rows = await tx.all(
        f"SELECT s.id, s.name, {columns} FROM segments s"
        " LEFT JOIN segment_contacts sc ON sc.account = s.account AND sc.segment_id = s.id"
        " LEFT JOIN contacts c ON c.account = sc.account AND c.id = sc.contact_id"
        f" WHERE {where} GROUP BY s.seq ORDER BY s.seq DESC", params)
    return [{"id": row["id"], "name": row["name"], **_counts(row, metrics)} for row in rows]


async def http_metrics(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await segment_metrics(tx, req.query)


OPS = [Op("segments/metrics", "GET", "/segments/metrics", http_metrics)]
