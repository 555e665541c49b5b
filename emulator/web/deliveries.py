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
from emulator.resources.webhooks.catalogue import EVENT_TYPES
from emulator.web import activity, confirm
from emulator.web.actions import back_to, form_of
from emulator.web.paging import Cursor, Window, cursor_of, seek
from emulator.web.render import UI, _pretty_json, page, redirect
from emulator.web.sessions import account_of, session_account
from emulator.web.views import _chrome as page_chrome

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

    from emulator.core.db import Row, Tx

BASE = f"{UI}/webhooks"
PAGE_SIZE = 50
STATUSES = ("success", "failed", "attempting", "pending")
REPLAY_WAIT_SECONDS = 2.0  # show the replayed attempt when the endpoint answers quickly; never hang
INLINE_PAYLOAD = 2000  # characters of pretty JSON shown in the list: a page stays ≤ 200 KB
INLINE_ATTEMPT = 300
STATUS_SENTENCE = "Status takes success, failed, attempting or pending, not “{}”."
TYPE_SENTENCE = "“{}” is not a webhook event type (such as email.delivered)."
ENDPOINT_SENTENCE = "This account has no webhook endpoint with the id “{}”."


@dataclass(frozen=True)
class DeliveryFilter:
    endpoint: str = ""  # a webhook id
    type: str = ""
    status: str = ""

    @property
    def active(self) -> bool:
        return bool(self.endpoint or self.type or self.status)

    def params(self) -> dict[str, str]:
        return {k: v for k, v in (("endpoint", self.endpoint), ("type", self.type), ("status", self.status))
                if v}

    @property
    def query(self) -> str:
        chosen = self.params()
        return f"?{urlencode(chosen)}" if chosen else ""

    def problem(self, endpoints: list[Row]) -> str | None:
        """The sentence saying why a filter value cannot be used, if one cannot."""
        if self.status and self.status not in STATUSES:
            return STATUS_SENTENCE.format(self.status[:40])
        if self.type and self.type not in EVENT_TYPES:
            return TYPE_SENTENCE.format(self.type[:60])
        if self.endpoint and self.endpoint not in {row["id"] for row in endpoints}:
            return ENDPOINT_SENTENCE.format(self.endpoint[:60])
        return None

    def where(self, account: str) -> tuple[str, list[Any]]:
        clauses, params = ["m.account = ?"], [account]
        chosen = (("m.webhook_id", self.endpoint), ("m.type", self.type), ("m.status", self.status))
        for column, value in chosen:
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        return " AND ".join(clauses), params


def parse_filter(query: QueryParams) -> DeliveryFilter:
    return DeliveryFilter(endpoint=query.get("endpoint", "").strip()[:100],
                          type=query.get("type", "").strip()[:100],
                          status=query.get("status", "").strip()[:40])


def _payload(text: str) -> dict[str, Any]:
    pretty = _pretty_json(text)
    return {"text": pretty if len(pretty) <= INLINE_PAYLOAD else pretty[:INLINE_PAYLOAD],
            "cut": max(0, len(pretty) - INLINE_PAYLOAD)}


def _short(attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attempts with response bodies cut to INLINE_ATTEMPT characters (a receiver may answer 64 KB)."""
    cut = INLINE_ATTEMPT
    return [{**a, "body": f"{a['body'][:cut]}… ({len(a['body']) - cut} more characters)"}
            if a["body"] and len(a["body"]) > cut else a for a in attempts]


async def _deliveries(tx: Tx, chosen: DeliveryFilter, cursor: Cursor) -> tuple[list[dict[str, Any]], Window]:
    where, params = chosen.where(tx.account)
    window = await seek(tx, "SELECT m.*, w.endpoint, e.subject_id FROM webhook_messages m "
                            "LEFT JOIN webhooks w ON w.id = m.webhook_id"
                            " LEFT JOIN events e ON e.id = m.event_id",
                        where, params, seq="m.seq", cursor=cursor, size=PAGE_SIZE,
                        link=(BASE, chosen.params()))
    rows = window.rows
    attempts = await activity.attempts_of(tx, [row["id"] for row in rows])
    return [{**activity.delivery(row, _short(attempts.get(row["id"], []))), "subject_id": row["subject_id"],
             "payload": _payload(row["payload"]), "webhook_id": row["webhook_id"]} for row in rows], window


async def _total(tx: Tx, chosen: DeliveryFilter) -> int:
    where, params = chosen.where(tx.account)
    row = await tx.one(f"SELECT count(*) AS n FROM webhook_messages m WHERE {where}", params)
    return int(row["n"]) if row else 0


async def _choices(tx: Tx) -> dict[str, Any]:
    endpoints = await tx.all(
        "SELECT w.id, w.endpoint, w.events, w.status, w.created_at, "
        # `m.account = w.account` lets the (account, webhook_id) index serve each count
        "(SELECT count(*) FROM webhook_messages m WHERE m.account = w.account AND m.webhook_id = w.id)"
        " AS total, (SELECT count(*) FROM webhook_messages m WHERE m.account = w.account"
        " AND m.webhook_id = w.id AND m.status = 'failed') AS failed "
        "FROM webhooks w WHERE w.account = ? ORDER BY w.seq DESC", [tx.account])
    return {"endpoints": endpoints, "types": EVENT_TYPES}


async def _listing(tx: Tx, chosen: DeliveryFilter, query: QueryParams) -> dict[str, Any]:
    choices = await _choices(tx)
    problem = chosen.problem(choices["endpoints"])
    if problem is not None:
        return {**choices, "deliveries": [], "problem": problem, "total": None}
    deliveries, window = await _deliveries(tx, chosen, cursor_of(query))
    return {**choices, "deliveries": deliveries, "problem": None, "total": await _total(tx, chosen),
            "older_url": window.older_url, "newer_url": window.newer_url}


async def webhooks_page(request: Request) -> Response:
    chosen = parse_filter(request.query_params)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        enabled = activity.webhooks_enabled(tx)
        listing = await _listing(tx, chosen, request.query_params) if enabled else \
            {"endpoints": [], "types": [], "deliveries": [], "problem": None, "total": 0}
        chrome = await page_chrome(tx, "webhooks")
    pending = any(d["status"] in activity.PENDING for d in listing["deliveries"])
    return page(request, "webhooks.html", {**chrome, **listing, "pending": pending, "chosen": chosen,
                                           "statuses": STATUSES})


async def _question(request: Request, webhook_id: str, message_id: str, back: str) -> Response | None:
    """"Replay delivery msg_… to https://…?" (confirm.py), or None where there is no such delivery: the
    replay itself then says so."""
    async with emulator_of(request).transaction(session_account(request)) as tx:
        row = await tx.one("SELECT m.status, m.type, w.endpoint FROM webhook_messages m JOIN webhooks w"
                           " ON w.id = m.webhook_id WHERE m.account = ? AND m.webhook_id = ? AND m.id = ?",
                           [tx.account, webhook_id, message_id])
    if row is None:
        return None
    delivered = row["status"] == "success"
    verb = "Replay" if delivered else "Retry"
    return confirm.ask(request, question=f"{verb} delivery {message_id} to {row['endpoint']}?",
                       detail=f"One more attempt of this {row['type']} event, sent now; the automatic retry"
                              " schedule is untouched.",
                       act="Replay" if delivered else "Retry now", keep="Keep", back=back)


async def replay(request: Request) -> Response:
    webhook_id, message_id = request.path_params["webhook_id"], request.path_params["message_id"]
    form = await form_of(request)
    back = back_to(form, BASE)
    if not confirm.confirmed(form) and (asked := await _question(request, webhook_id, message_id, back)):
        return asked
    emu = emulator_of(request)
    try:
        async with emu.transaction(session_account(request)) as tx:
            await webhooks.replay_event(tx, webhook_id, message_id)
    except ApiError as error:
        return page(request, "error.html", {"title": "Cannot replay", "message": error.message}, error.status)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(emu.jobs.flush()), REPLAY_WAIT_SECONDS)
    return redirect(back)


ROUTES: list[BaseRoute] = [
    Route(BASE, webhooks_page, methods=["GET"]),
    Route(f"{BASE}/{{webhook_id}}/events/{{message_id}}/replay", replay, methods=["POST"]),
]
