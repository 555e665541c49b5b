"""The Webhooks tab: endpoints, then every delivery as one compact table row (time, endpoint, event,
status, attempts) with its payload and attempts folded away, filtered by endpoint, event type and status;
and per delivery "Retry now" (not yet delivered) or "Replay" (delivered), both the API's replay
(`POST /webhooks/{id}/events/{msg_id}/replay`): one extra attempt now, the retry schedule untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.core.errors import ApiError
from emulator.resources.webhooks import service as webhooks
from emulator.web import activity
from emulator.web.actions import back_to, form_of
from emulator.web.render import UI, page, redirect
from emulator.web.sessions import account_of, session_account
from emulator.web.views import _chrome as page_chrome

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

    from emulator.core.db import Tx

BASE = f"{UI}/webhooks"
SHOWN = 100
STATUSES = ("success", "failed", "attempting", "pending")
REPLAY_WAIT_SECONDS = 2.0  # show the replayed attempt when the endpoint answers quickly; never hang


@dataclass(frozen=True)
class DeliveryFilter:
    endpoint: str = ""  # a webhook id
    type: str = ""
    status: str = ""

    @property
    def active(self) -> bool:
        return bool(self.endpoint or self.type or self.status)

    @property
    def query(self) -> str:
        chosen = {k: v for k, v in (("endpoint", self.endpoint), ("type", self.type),
                                    ("status", self.status)) if v}
        return f"?{urlencode(chosen)}" if chosen else ""

    def where(self, account: str) -> tuple[str, list[Any]]:
        clauses, params = ["m.account = ?"], [account]
        chosen = (("m.webhook_id", self.endpoint), ("m.type", self.type), ("m.status", self.status))
        for column, value in chosen:
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        return " AND ".join(clauses), params


def parse_filter(query: QueryParams) -> DeliveryFilter:
    status = query.get("status", "")
    return DeliveryFilter(endpoint=query.get("endpoint", "")[:100], type=query.get("type", "")[:100],
                          status=status if status in STATUSES else "")


async def _deliveries(tx: Tx, chosen: DeliveryFilter) -> list[dict[str, Any]]:
    where, params = chosen.where(tx.account)
    rows = await tx.all(
        "SELECT m.*, w.endpoint, e.subject_id FROM webhook_messages m "
        "LEFT JOIN webhooks w ON w.id = m.webhook_id LEFT JOIN events e ON e.id = m.event_id "
        f"WHERE {where} ORDER BY m.seq DESC LIMIT {SHOWN}", params)
    attempts = await activity.attempts_of(tx, [row["id"] for row in rows])
    return [{**activity.delivery(row, attempts.get(row["id"], [])), "subject_id": row["subject_id"],
             "payload": row["payload"], "webhook_id": row["webhook_id"]} for row in rows]


async def _choices(tx: Tx) -> dict[str, Any]:
    endpoints = await tx.all(
        "SELECT w.id, w.endpoint, w.events, w.status, w.created_at, "
        "(SELECT count(*) FROM webhook_messages m WHERE m.webhook_id = w.id) AS total, "
        "(SELECT count(*) FROM webhook_messages m WHERE m.webhook_id = w.id AND m.status = 'failed')"
        " AS failed "
        "FROM webhooks w WHERE w.account = ? ORDER BY w.seq DESC", [tx.account])
    types = await tx.all("SELECT DISTINCT type FROM webhook_messages WHERE account = ? ORDER BY type",
                         [tx.account])
    return {"endpoints": endpoints, "types": [row["type"] for row in types]}


async def webhooks_page(request: Request) -> Response:
    chosen = parse_filter(request.query_params)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        enabled = activity.webhooks_enabled(tx)
        deliveries = await _deliveries(tx, chosen) if enabled else []
        choices = await _choices(tx) if enabled else {"endpoints": [], "types": []}
        chrome = await page_chrome(tx, "webhooks")
    pending = any(d["status"] in activity.PENDING for d in deliveries)
    return page(request, "webhooks.html", {**chrome, **choices, "deliveries": deliveries, "pending": pending,
                                           "chosen": chosen, "statuses": STATUSES, "shown": SHOWN})


async def replay(request: Request) -> Response:
    webhook_id, message_id = request.path_params["webhook_id"], request.path_params["message_id"]
    emu = emulator_of(request)
    try:
        async with emu.transaction(session_account(request)) as tx:
            await webhooks.replay_event(tx, webhook_id, message_id)
    except ApiError as error:
        return page(request, "error.html", {"title": "Cannot replay", "message": error.message}, error.status)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(emu.jobs.flush()), REPLAY_WAIT_SECONDS)
    return redirect(back_to(await form_of(request), BASE))


ROUTES: list[BaseRoute] = [
    Route(BASE, webhooks_page, methods=["GET"]),
    Route(f"{BASE}/{{webhook_id}}/events/{{message_id}}/replay", replay, methods=["POST"]),
]
