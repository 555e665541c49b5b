"""Storage of the contacts group: every table, lookups by id or email, and the timestamp forms.

Audiences and segments are one record (reference contacts.md §2: "the same namespace"), so the legacy
audience paths and the segment paths read and write the same `segments` rows.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db, pg_timestamp
from emulator.core.errors import not_found

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    # `email_key` is the lower-cased address: emails are unique per account, case-insensitively [rec].
    # `properties` is a JSON object of the values set on this contact (keys of contact_properties).
    """CREATE TABLE IF NOT EXISTS contacts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL,
        first_name TEXT,
        last_name TEXT,
        unsubscribed INTEGER NOT NULL DEFAULT 0,
        properties TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS contacts_email ON contacts (account, email_key)",
    # Pages walk an account's contacts in `seq` order; without this the planner sorts them all.
    "CREATE INDEX IF NOT EXISTS contacts_account ON contacts (account, seq)",
    # `kind` remembers whether it was made as an audience or a segment (the object name on create).
    """CREATE TABLE IF NOT EXISTS segments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        filter TEXT,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS segment_contacts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        segment_id TEXT NOT NULL,
        contact_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS segment_contacts_pair"
    " ON segment_contacts (account, segment_id, contact_id)",
    "CREATE INDEX IF NOT EXISTS segment_contacts_contact ON segment_contacts (account, contact_id, seq)",
    # A broadcast's fan-out walks a segment's members in joining order, a chunk at a time.
    "CREATE INDEX IF NOT EXISTS segment_contacts_members ON segment_contacts (account, segment_id, seq)",
    """CREATE TABLE IF NOT EXISTS topics (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        default_subscription TEXT NOT NULL,
        visibility TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    # A contact's explicit choice for a topic; no row means the topic's default subscription.
    """CREATE TABLE IF NOT EXISTS contact_topics (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        contact_id TEXT NOT NULL,
        topic_id TEXT NOT NULL,
        subscription TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS contact_topics_pair ON contact_topics (account, contact_id, topic_id)",
    # `fallback_value` is JSON (a string or a number, or null).
    """CREATE TABLE IF NOT EXISTS contact_properties (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        key TEXT NOT NULL,
        type TEXT NOT NULL,
        fallback_value TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS contact_properties_key ON contact_properties (account, key)",
    # `options` is the parsed column map and targets (JSON); `csv` the uploaded text, read by the job.
    """CREATE TABLE IF NOT EXISTS contact_imports (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        status TEXT NOT NULL,
        options TEXT NOT NULL,
        csv TEXT NOT NULL,
        counts TEXT NOT NULL,
        created_at TEXT NOT NULL,
        completed_at TEXT
    )""",
]


def email_key(email: str) -> str:
    return email.strip().lower()


def postgres(value: str) -> str:
    """`2025-11-30 20:41:40.84216+00` (contacts, segments, contact properties) [rec]: for properties the
    docs' example form, still ISO 8601 with a UTC offset as seed §2.4 asks."""
    return pg_timestamp(from_db(value))


def millis(value: str | datetime) -> str:
    """`2026-01-06 22:59:55.977+00`: segment memberships [seed §2.5], topics, imports."""
    moment = from_db(value) if isinstance(value, str) else value
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"


async def find_contact(tx: Tx, id_or_email: str) -> Row | None:
    """The account's contact whose id or email (case-insensitive) is `id_or_email`, or None."""
    if "@" in id_or_email:
        return await tx.one("SELECT * FROM contacts WHERE account = ? AND email_key = ?",
                            (tx.account, email_key(id_or_email)))
    return await tx.one("SELECT * FROM contacts WHERE account = ? AND id = ?", (tx.account, id_or_email))


async def require_contact(tx: Tx, id_or_email: str) -> Row:
    row = await find_contact(tx, id_or_email)
    if row is None:
        raise not_found("Contact")
    return row


async def find_segment(tx: Tx, segment_id: str) -> Row | None:
    return await tx.one("SELECT * FROM segments WHERE account = ? AND id = ?", (tx.account, segment_id))


async def require_segment(tx: Tx, segment_id: str, resource: str = "Segment") -> Row:
    row = await find_segment(tx, segment_id)
    if row is None:
        raise not_found(resource)
    return row


async def find_topic(tx: Tx, topic_id: str) -> Row | None:
    return await tx.one("SELECT * FROM topics WHERE account = ? AND id = ?", (tx.account, topic_id))


async def require_topic(tx: Tx, topic_id: str) -> Row:
    row = await find_topic(tx, topic_id)
    if row is None:
        raise not_found("Topic")
    return row


# ---- contact bodies ----------------------------------------------------------------------------

def contact_properties(row: Row) -> dict[str, Any]:
    text = row["properties"]
    return {} if text == "{}" else json.loads(text)  # type: ignore[no-any-return]


def contact_body(row: Row, types: dict[str, str]) -> dict[str, Any]:
    """GET /contacts/{id_or_email}, key order of the recordings [rec]. `types` maps property keys to their
    type: each value is shown as `{value, type}`, as the docs' example and the Python SDK's
    `ContactPropertyValue` have it (the recordings only ever show `{}`)."""
    properties = {key: {"value": value, "type": types.get(key, "string")}
                  for key, value in contact_properties(row).items()}
    return {"object": "contact", "id": row["id"], "email": row["email"], "first_name": row["first_name"],
            "last_name": row["last_name"], "created_at": postgres(row["created_at"]),
            "unsubscribed": bool(row["unsubscribed"]), "properties": properties}


def contact_item(row: Row) -> dict[str, Any]:
    """A list item: no `object`, no `properties`; real key order [rec]."""
    return {"id": row["id"], "created_at": postgres(row["created_at"]), "email": row["email"],
            "unsubscribed": bool(row["unsubscribed"]), "first_name": row["first_name"],
            "last_name": row["last_name"]}


# Contacts joined to their memberships, for pages of one segment's contacts (fetch_page's `table`).
SEGMENT_MEMBERS = ("(SELECT c.*, sc.segment_id AS segment_id FROM contacts c JOIN segment_contacts sc"
                   " ON sc.account = c.account AND sc.contact_id = c.id)")
