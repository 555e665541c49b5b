"""Broadcast tables, lookups and bodies (reference/broadcasts.md §1)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db
from emulator.core.errors import INVALID_PARAMETER, ApiError, not_found
from emulator.core.pages import UUID

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    # reply_to: JSON list or NULL. status: draft | scheduled | queued | sent.
    """CREATE TABLE IF NOT EXISTS broadcasts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT,
        segment_id TEXT,
        from_addr TEXT,
        subject TEXT,
        reply_to TEXT,
        preview_text TEXT,
        html TEXT,
        text TEXT,
        topic_id TEXT,
        status TEXT NOT NULL,
        scheduled_at TEXT,
        sent_at TEXT,
        created_at TEXT NOT NULL
    )""",
    # One row per contact a send considered: `email_id` is the email it got, NULL when it was suppressed;
    # `token` names its unsubscribe link.
    """CREATE TABLE IF NOT EXISTS broadcast_recipients (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        broadcast_id TEXT NOT NULL,
        contact_id TEXT,
        email TEXT NOT NULL,
        email_id TEXT,
        status TEXT NOT NULL,
        unsubscribed INTEGER NOT NULL DEFAULT 0,
        token TEXT,
        created_at TEXT NOT NULL
    )""",
    # A send under way or done: `cursor` is the last segment membership (its seq) the fan-out walked,
    # `walked` how many members that was, `audience` the segment's size when the send started.
    """CREATE TABLE IF NOT EXISTS broadcast_sends (
        account TEXT NOT NULL,
        broadcast_id TEXT NOT NULL,
        cursor INTEGER NOT NULL,
        walked INTEGER NOT NULL,
        audience INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        PRIMARY KEY (account, broadcast_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS broadcast_recipients_by_broadcast"
    " ON broadcast_recipients (account, broadcast_id)",
    # No index by `email_id`: nothing looks a recipient up by its email, and a random key costs a page
    # write per recipient at real sizes (issue 27). Files from before drop theirs.
    "DROP INDEX IF EXISTS broadcast_recipients_by_email",
    "CREATE INDEX IF NOT EXISTS broadcast_recipients_by_token ON broadcast_recipients (token)",
]


def millis(value: str | None) -> str | None:
    """`YYYY-MM-DD HH:MM:SS.mmm+00`, the form of every broadcast timestamp [openapi examples]."""
    if value is None:
        return None
    return from_db(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"


def list_item(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "audience_id": row["segment_id"],
            "segment_id": row["segment_id"], "status": row["status"], "created_at": millis(row["created_at"]),
            "scheduled_at": millis(row["scheduled_at"]), "sent_at": millis(row["sent_at"]),
            "topic_id": row["topic_id"]}


def serialize(row: Row) -> dict[str, Any]:
    """GET /broadcasts/{id}, keys in the order of the reference's example."""
    return {
        "object": "broadcast", "id": row["id"], "name": row["name"], "segment_id": row["segment_id"],
        "audience_id": row["segment_id"], "from": row["from_addr"], "subject": row["subject"],
        "reply_to": json.loads(row["reply_to"]) if row["reply_to"] else None,
        "preview_text": row["preview_text"], "status": row["status"], "created_at": millis(row["created_at"]),
        "scheduled_at": millis(row["scheduled_at"]), "sent_at": millis(row["sent_at"]),
        "text": row["text"], "html": row["html"], "topic_id": row["topic_id"],
    }


async def find_broadcast(tx: Tx, broadcast_id: str) -> Row | None:
    return await tx.one("SELECT * FROM broadcasts WHERE account = ? AND id = ?", (tx.account, broadcast_id))


async def send_progress(tx: Tx, broadcast_id: str) -> Row | None:
    """The fan-out's progress (`audience`, `walked`, `started_at`), None before the send started."""
    return await tx.one("SELECT * FROM broadcast_sends WHERE account = ? AND broadcast_id = ?",
                        (tx.account, broadcast_id))


async def require_broadcast(tx: Tx, broadcast_id: str, *, uuid_path: bool = False) -> Row:
    """`uuid_path`: the OpenAPI types this path's id as `format: uuid` (cancel, recipients, clicked links),
    so a malformed id is a 422 `invalid_parameter` before any lookup, as on the other uuid paths."""
    if uuid_path and not UUID.match(broadcast_id):
        raise ApiError(INVALID_PARAMETER, "The `id` must be a valid UUID.")
    row = await find_broadcast(tx, broadcast_id)
    if row is None:
        raise not_found("Broadcast")
    return row


async def delivery_counts(tx: Tx, broadcast_id: str) -> dict[str, int]:
    """How many of the broadcast's emails stand at each `last_event` (delivered, bounced, ...)."""
    rows = await tx.all("SELECT last_event, COUNT(*) AS n FROM emails WHERE account = ? AND broadcast_id = ?"
                        " GROUP BY last_event ORDER BY n DESC", (tx.account, broadcast_id))
    return {row["last_event"]: row["n"] for row in rows}


async def recipient_page(tx: Tx, broadcast_id: str, after: int, limit: int) -> list[Row]:
    """Recipients in the order they were sent to, after recipient `after` (a seq), with their email's
    `last_event` (NULL for a suppressed one)."""
    return await tx.all(
        "SELECT r.seq, r.contact_id, r.email, r.email_id, r.status, r.unsubscribed, e.last_event"
        " FROM broadcast_recipients r LEFT JOIN emails e ON e.id = r.email_id"
        " WHERE r.account = ? AND r.broadcast_id = ? AND r.seq > ? ORDER BY r.seq LIMIT ?",
        (tx.account, broadcast_id, after, limit))
