"""Webhooks: endpoints, signing secrets and their rotation, delivered events, attempts, replay.

Reference: reference/webhooks.md §1–§4. Delivery itself (signing, HTTP, retries) is emulator/delivery.py;
the event catalogue and the fan-out to deliveries is catalogue.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from emulator.api.ops import ApiRequest, Op
from emulator.core import errors, net, validate
from emulator.core.clock import from_db, iso_z, to_db
from emulator.core.errors import ApiError, invalid, not_found
from emulator.core.jobs import schedule
from emulator.core.pages import UUID, Page, fetch_page, list_body, parse_page
from emulator.resources.webhooks.catalogue import (
    DELIVER_JOB,
    EVENT_TYPES,
    fan_out,
    message_payload,
    subscriptions_changed,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator

TABLES = [
    """CREATE TABLE IF NOT EXISTS webhooks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        events TEXT NOT NULL,
        status TEXT NOT NULL,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_until TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS webhooks_account ON webhooks (account, status)",
    """CREATE TABLE IF NOT EXISTS webhook_messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        tries INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS webhook_messages_hook ON webhook_messages (account, webhook_id)",
    """CREATE TABLE IF NOT EXISTS webhook_attempts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        http_status_code INTEGER NOT NULL,
        response TEXT NOT NULL,
        reason TEXT,
        sent_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS webhook_attempts_message ON webhook_attempts (account, message_id)",
]
STATUSES = ["enabled", "disabled"]
# Reference §3.6 [seed]: the previous secret keeps signing for 24 hours after a rotation.
ROTATION_OVERLAP = timedelta(hours=24)
ENDPOINT_MESSAGE = "Invalid `endpoint` field. It must be a valid URL, like `https://example.com/webhooks`."
SELF_MESSAGE = ("Invalid `endpoint` field. `{where}` is this emulator itself, and it never delivers webhooks"
                " to its own ports (its UI and control plane would act on them); point it at your receiver.")


# ---- serialisation -----------------------------------------------------------------------------

def webhook_timestamp(value: datetime) -> str:
    """`2026-03-02 10:15:07.412+00`: webhook objects use milliseconds, unlike emails (reference §2)."""
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S") + f".{value.microsecond // 1000:03d}+00"


def list_item(row: Row) -> dict[str, Any]:
    # The docs' current example and the OpenAPI item agree: no `signing_secret` in a list (a list should
    # not hand out secrets; create, get and rotate do).
    return {
        "id": row["id"], "created_at": webhook_timestamp(from_db(row["created_at"])),
        "status": row["status"], "endpoint": row["endpoint"], "events": json.loads(row["events"]),
    }


def serialize(row: Row) -> dict[str, Any]:
    return {
        "object": "webhook", "id": row["id"], "created_at": webhook_timestamp(from_db(row["created_at"])),
        "status": row["status"], "endpoint": row["endpoint"], "events": json.loads(row["events"]),
        "signing_secret": row["secret"],
    }


def event_item(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "type": row["type"], "created_at": iso_z(from_db(row["created_at"])),
            "status": row["status"]}


def documented_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as the retrieve-event docs show it: an outbound email event's `data` is the OpenAPI
    OutboundEmailEventData, without the `message_id` the delivery itself carries (docs webhooks/emails/*);
    received mail keeps it (EmailReceivedEventData requires it)."""
    data = payload.get("data")
    kind = str(payload.get("type", ""))
    if not kind.startswith("email.") or kind == "email.received" or not isinstance(data, dict):
        return payload
    return {**payload, "data": {key: value for key, value in data.items() if key != "message_id"}}


def event_body(row: Row) -> dict[str, Any]:
    pending = row["status"] in ("pending", "attempting") and row["next_attempt_at"]
    return {
        "object": "webhook_event", **event_item(row),
        "next_attempt_at": iso_z(from_db(row["next_attempt_at"])) if pending else None,
        "payload": documented_payload(message_payload(row)),
    }


def attempt_item(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "http_status_code": row["http_status_code"], "response": row["response"],
            "sent_at": iso_z(from_db(row["sent_at"]))}


# ---- validation --------------------------------------------------------------------------------

def _endpoint(body: dict[str, Any]) -> str:
    value = body.get("endpoint")
    if not isinstance(value, str):
        raise invalid(ENDPOINT_MESSAGE)
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(ENDPOINT_MESSAGE)
    return value.strip()


def _not_the_emulator(tx: Tx, endpoint: str) -> str:
    """Refuse an endpoint on one of the emulator's own ports of this machine (issue 36: a tenant's webhook
    aimed at the UI's delete URL deleted another tenant's mail). Only what the URL says is checked here,
    with no lookup; a name that resolves to this machine is refused when a delivery connects (client.py)."""
    parts = urlsplit(endpoint)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return endpoint  # not a port at all: the delivery attempt says so, as it always has
    host = parts.hostname or ""
    if port in net.own_ports(tx.emu.state, tx.emu.settings) and net.names_this_machine(host):
        raise invalid(SELF_MESSAGE.format(where=f"[{host}]:{port}" if ":" in host else f"{host}:{port}"))
    return endpoint


def _events(body: dict[str, Any]) -> list[str]:
    value = body.get("events")
    if not isinstance(value, list) or not value:
        raise invalid("The `events` field must be an array with at least one event type.")
    for item in value:
        if item not in EVENT_TYPES:
            raise invalid(f"Invalid `events` field. `{item}` is not a valid event type.")
    return list(dict.fromkeys(value))  # duplicates would only produce duplicate deliveries


def _webhook_id(webhook_id: str) -> str:
    # The OpenAPI types the path id as a uuid (reference 00-general §7).
    if not UUID.match(webhook_id):
        raise ApiError(errors.INVALID_PARAMETER, "The `webhook_id` must be a valid UUID.")
    return webhook_id


def _no_before(query: Any) -> Page:
    if query.get("before") is not None:
        raise invalid("The `before` parameter is not supported for this list. Use `after` to paginate.")
    return parse_page(query, optional_limit=False)


# ---- services ----------------------------------------------------------------------------------

def _new_secret(tx: Tx) -> str:
    return "whsec_" + tx.emu.ids.base64_secret(24)


async def create_webhook(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    validate.required(body, "endpoint")
    validate.required(body, "events")
    row: Row = {
        "id": tx.new_id(), "account": tx.account, "endpoint": _not_the_emulator(tx, _endpoint(body)),
        "events": json.dumps(_events(body)), "status": "enabled", "secret": _new_secret(tx),
        "previous_secret": None, "previous_until": None, "created_at": tx.now_db,
    }
    await tx.insert("webhooks", row)
    subscriptions_changed(tx)
    return {"object": "webhook", "id": row["id"], "signing_secret": row["secret"]}


async def get_webhook_row(tx: Tx, webhook_id: str) -> Row:
    row = await tx.one("SELECT * FROM webhooks WHERE id = ? AND account = ?",
                       (_webhook_id(webhook_id), tx.account))
    if row is None:
        raise not_found("Webhook")
    return row


async def list_webhooks(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "webhooks", parse_page(query, optional_limit=False,
                                                                  uuid_cursors=True))
    return list_body([list_item(row) for row in rows], has_more)


async def update_webhook(tx: Tx, webhook_id: str, body: dict[str, Any]) -> dict[str, Any]:
    await get_webhook_row(tx, webhook_id)
    changes: dict[str, Any] = {}
    if "endpoint" in body:
        changes["endpoint"] = _not_the_emulator(tx, _endpoint(body))
    if "events" in body:
        changes["events"] = json.dumps(_events(body))
    status = validate.one_of(body, "status", STATUSES)
    if status is not None:
        changes["status"] = status
    await tx.update("webhooks", webhook_id, changes)
    subscriptions_changed(tx)
    return {"object": "webhook", "id": webhook_id}


async def delete_webhook(tx: Tx, webhook_id: str) -> dict[str, Any]:
    await get_webhook_row(tx, webhook_id)
    # Pending delivery jobs find no message any more and stop: a removed endpoint gets nothing.
    for table, column in (("webhook_attempts", "webhook_id"), ("webhook_messages", "webhook_id"),
                          ("webhooks", "id")):
        await tx.run(f"DELETE FROM {table} WHERE {column} = ? AND account = ?",
                     (webhook_id, tx.account))
    subscriptions_changed(tx)
    return {"object": "webhook", "id": webhook_id, "deleted": True}


async def rotate_secret(tx: Tx, webhook_id: str) -> dict[str, Any]:
    """The new secret signs from now on; the one it replaces co-signs for 24 h. A second rotation
    inside the window keeps only the immediately previous secret (reference §3.6 [recommendation])."""
    row = await get_webhook_row(tx, webhook_id)
    secret = _new_secret(tx)
    await tx.update("webhooks", webhook_id, {
        "secret": secret, "previous_secret": row["secret"],
        "previous_until": to_db(tx.now + ROTATION_OVERLAP),
    })
    subscriptions_changed(tx)  # deliveries sign with the cached secrets (catalogue.py `enabled_hook`)
    return {"object": "webhook", "id": webhook_id, "signing_secret": secret}


async def list_events(tx: Tx, webhook_id: str, query: Any) -> dict[str, Any]:
    page = _no_before(query)
    await get_webhook_row(tx, webhook_id)
    rows, has_more = await fetch_page(tx, "webhook_messages", page, "account = ? AND webhook_id = ?",
                                      [tx.account, webhook_id])
    return list_body([event_item(row) for row in rows], has_more)


async def get_message_row(tx: Tx, webhook_id: str, event_id: str) -> Row:
    await get_webhook_row(tx, webhook_id)
    row = await tx.one("SELECT * FROM webhook_messages WHERE id = ? AND webhook_id = ? AND account = ?",
                       (event_id, webhook_id, tx.account))
    if row is None:
        raise not_found("Webhook event")
    return row


async def list_attempts(tx: Tx, webhook_id: str, event_id: str, query: Any) -> dict[str, Any]:
    page = _no_before(query)
    await get_message_row(tx, webhook_id, event_id)
    rows, has_more = await fetch_page(tx, "webhook_attempts", page, "account = ? AND message_id = ?",
                                      [tx.account, event_id])
    return list_body([attempt_item(row) for row in rows], has_more)


async def replay_event(tx: Tx, webhook_id: str, event_id: str) -> dict[str, Any]:
    """One extra delivery, now; the automatic retry schedule carries on untouched (reference §3.10)."""
    await get_message_row(tx, webhook_id, event_id)
    await schedule(tx, DELIVER_JOB, tx.now,
                   {"message_id": event_id, "mode": "replay", "webhook_id": webhook_id})
    return {"object": "webhook_event", "id": event_id}


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_webhook(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_webhooks(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return serialize(await get_webhook_row(tx, req.params["webhook_id"]))


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_webhook(tx, req.params["webhook_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_webhook(tx, req.params["webhook_id"])


async def http_rotate(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await rotate_secret(tx, req.params["webhook_id"])


async def http_list_events(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_events(tx, req.params["webhook_id"], req.query)


async def http_get_event(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return event_body(await get_message_row(tx, req.params["webhook_id"], req.params["event_id"]))


async def http_list_attempts(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_attempts(tx, req.params["webhook_id"], req.params["event_id"], req.query)


async def http_replay(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await replay_event(tx, req.params["webhook_id"], req.params["event_id"])


def install(emu: Emulator) -> None:
    emu.events.on_emit(fan_out)


_HOOK = "/webhooks/{webhook_id}"
_EVENT = f"{_HOOK}/events/{{event_id}}"
OPS = [
    Op("webhooks/create", "POST", "/webhooks", http_create, status=201),
    Op("webhooks/list", "GET", "/webhooks", http_list),
    Op("webhooks/get", "GET", _HOOK, http_get),
    Op("webhooks/update", "PATCH", _HOOK, http_update),
    Op("webhooks/remove", "DELETE", _HOOK, http_delete),
    Op("webhooks/rotate-signing-secret", "POST", f"{_HOOK}/signing-secret/rotate", http_rotate),
    Op("webhooks/list-events", "GET", f"{_HOOK}/events", http_list_events),
    Op("webhooks/get-event", "GET", _EVENT, http_get_event),
    Op("webhooks/list-event-attempts", "GET", f"{_EVENT}/attempts", http_list_attempts),
    Op("webhooks/replay-event", "POST", f"{_EVENT}/replay", http_replay),
]
