"""What happened after a message was accepted: its events, the webhook deliveries they caused and
each delivery attempt (read from the tables of emulator/resources/webhooks.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

RECENT_EVENTS = 100
STATE_CLASS = {"success": "ok", "failed": "bad", "attempting": "warn", "pending": "wait"}
PENDING = ("pending", "attempting")


def webhooks_enabled(tx: Tx) -> bool:
    return "webhook_messages" in tx.db.tables


def _marks(values: list[str]) -> str:
    return ",".join("?" for _ in values)


async def attempts_of(tx: Tx, delivery_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    if not delivery_ids:
        return found
    rows = await tx.all(
        "SELECT message_id, http_status_code, response, reason, sent_at FROM webhook_attempts "
        f"WHERE account = ? AND message_id IN ({_marks(delivery_ids)}) ORDER BY seq",
        [tx.account, *delivery_ids])
    for row in rows:
        attempts = found.setdefault(row["message_id"], [])
        attempts.append({
            "number": len(attempts) + 1, "created_at": row["sent_at"],
            "status_code": row["http_status_code"] or None, "error": row["reason"],
            "body": row["response"], "duration_ms": None,
        })
    return found


def delivery(row: Row, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": row["id"], "event_id": row["event_id"], "endpoint": row["endpoint"] or row["webhook_id"],
        "status": row["status"], "state_class": STATE_CLASS.get(row["status"], "muted"),
        "next_attempt_at": row["next_attempt_at"] if row["status"] in PENDING else None,
        "attempts": attempts, "type": row["type"], "created_at": row["created_at"],
    }


async def deliveries_for(tx: Tx, event_ids: list[str]) -> list[dict[str, Any]]:
    if not event_ids or not webhooks_enabled(tx):
        return []
    rows = await tx.all(
        "SELECT m.*, w.endpoint FROM webhook_messages m LEFT JOIN webhooks w ON w.id = m.webhook_id "
        f"WHERE m.account = ? AND m.event_id IN ({_marks(event_ids)}) ORDER BY m.seq",
        [tx.account, *event_ids])
    attempts = await attempts_of(tx, [row["id"] for row in rows])
    return [delivery(row, attempts.get(row["id"], [])) for row in rows]


def reason(event_type: str, data: dict[str, Any]) -> str | None:
    """Why a message did not (or not yet) reach its recipient, in words, from the event's payload."""
    if event_type == "email.bounced":
        bounce = data.get("bounce") or {}
        subtype = f" ({bounce['subType']})" if bounce.get("subType") else ""
        return f"{bounce.get('type', '')} bounce{subtype}: {bounce.get('message', '')}".strip(": ")
    if event_type == "email.failed":
        return f"Failed: {str((data.get('failed') or {}).get('reason', 'unknown')).replace('_', ' ')}"
    if event_type == "email.suppressed":
        return f"Suppressed: {(data.get('suppressed') or {}).get('message', '')}".strip(": ")
    if event_type == "email.complained":
        return "The recipient marked the message as spam."
    if event_type == "email.delivery_delayed":
        return "Delivery delayed: the recipient's server has not accepted it yet."
    return None


def _with_reason(row: Row) -> dict[str, Any]:
    data = json.loads(row["data"]) if isinstance(row["data"], str) else row["data"]
    return {**row, "reason": reason(row["type"], data if isinstance(data, dict) else {})}


async def events_for(tx: Tx, subject_id: str) -> list[dict[str, Any]]:
    """The message's events, oldest first, each with the deliveries it caused."""
    rows = await tx.all("SELECT id, type, created_at, data FROM events "
                        "WHERE account = ? AND subject_id = ? ORDER BY seq", [tx.account, subject_id])
    deliveries = await deliveries_for(tx, [row["id"] for row in rows])
    by_event: dict[str, list[dict[str, Any]]] = {}
    for delivery in deliveries:
        by_event.setdefault(delivery["event_id"], []).append(delivery)
    return [{**_with_reason(row), "deliveries": by_event.get(row["id"], [])} for row in rows]


def any_pending(events: list[dict[str, Any]]) -> bool:
    return any(d["status"] in PENDING for e in events for d in e["deliveries"])
