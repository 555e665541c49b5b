"""The Broadcasts page (each broadcast's status, audience and send progress) and one broadcast's page
(its delivery statuses in figures, and its recipients in the order they were sent to, in keyset pages).
Read-only, one short transaction each; a send under way shows a live progress bar (progress.js)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.core.db import Row, Tx
from emulator.core.typed import whole_number_or_none
from emulator.resources.broadcasts.store import (
    delivery_counts,
    find_broadcast,
    recipient_page,
    send_progress,
)
from emulator.resources.contacts import segment_size
from emulator.web.render import UI, not_found, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

BASE = f"{UI}/broadcasts"
SHOWN = 100
RECIPIENTS = 50


async def _card(tx: Tx, row: Row, sizes: dict[str, int]) -> dict[str, Any]:
    """The broadcast with its audience (the segment's size until it is sent to; `sizes` keeps those
    counted for the page) and progress."""
    progress = await send_progress(tx, row["id"])
    segment = await tx.one("SELECT name FROM segments WHERE account = ? AND id = ?",
                           (tx.account, row["segment_id"]))
    segment_id = row["segment_id"] or ""
    if progress is None and segment_id not in sizes:
        sizes[segment_id] = await segment_size(tx, segment_id)
    audience = progress["audience"] if progress else sizes[segment_id]
    return {**row, "segment_name": segment["name"] if segment else None, "audience": audience,
            "walked": progress["walked"] if progress else 0,
            "running": row["status"] in ("queued", "scheduled") and progress is not None}


async def broadcasts(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        rows = await tx.all(f"SELECT * FROM broadcasts WHERE account = ? ORDER BY seq DESC LIMIT {SHOWN}",
                            (tx.account,))
        sizes: dict[str, int] = {}
        cards = [await _card(tx, row, sizes) for row in rows]
        chrome = await page_chrome(tx, "broadcasts")
    return page(request, "broadcasts.html", {**chrome, "broadcasts": cards, "base": BASE,
                                             "running": any(card["running"] for card in cards)})


async def broadcast(request: Request) -> Response:
    after = request.query_params.get("after", "")
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await find_broadcast(tx, request.path_params["id"][:100])
        if row is None:
            return not_found(request, "Broadcast")
        card = await _card(tx, row, {})
        counts = await delivery_counts(tx, row["id"])
        recipients = await recipient_page(tx, row["id"], whole_number_or_none(after) or 0,
                                          RECIPIENTS + 1)
        chrome = await page_chrome(tx, "broadcasts")
    more = len(recipients) > RECIPIENTS
    recipients = recipients[:RECIPIENTS]
    return page(request, "broadcast.html", {
        **chrome, "broadcast": card, "counts": counts, "recipients": recipients, "base": BASE,
        "running": card["running"], "first": bool(after),
        "next": f"{BASE}/{row['id']}?after={recipients[-1]['seq']}" if more else None})


ROUTES: list[BaseRoute] = [
    Route(BASE, broadcasts, methods=["GET"]),
    Route(BASE + "/{id}", broadcast, methods=["GET"]),
]
