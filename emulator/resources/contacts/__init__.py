"""Contacts, audiences, segments, topics, contact properties and CSV imports.

Reference: reference/contacts.md. Modules: `store` (tables, lookups, contact bodies), `service`
(contacts and the legacy audience-scoped contact paths), `segments` (segments, audiences, membership),
`metrics` (segment metrics), `topics` (topics and subscriptions), `properties` (contact properties),
`imports` (CSV imports).

Public service functions for other groups (stable signatures; every one scoped to `tx.account`):

- `find_contact(tx, id_or_email) -> Row | None` — the contact row by id or email (case-insensitive).
- `get_contact(tx, id_or_email) -> dict` — the GET /contacts/{id_or_email} body; 404 if unknown.
- `create_contact(tx, body) -> dict` — as POST /contacts (`{object, id}`); emits `contact.created`.
- `update_contact(tx, id_or_email, body) -> dict` — as PATCH /contacts/{id}; emits `contact.updated`.
- `delete_contact(tx, id_or_email) -> dict` — as DELETE /contacts/{id}; emits `contact.deleted`.
- `add_contact_to_segment(tx, id_or_email, segment_id) -> dict` — `{object:"contact_segment", ...}`.
- `segment_contacts(tx, segment_id) -> list[Row]` — every contact row of a segment, oldest first.
- `segment_members_after(tx, segment_id, after, limit, topic_id) -> list[Row]` — the next contacts of a
  segment in joining order, with `member_seq` (the cursor) and `subscription` to the topic.
- `segment_size(tx, segment_id) -> int` — how many contacts the segment has.
- `segment_audience(tx, segment_id, topic_id) -> int` — how many of them a broadcast would email now.
- `topic_subscription(tx, contact_id, topic_id) -> str` — "opt_in" | "opt_out", the topic's default
  unless the contact chose.
- `contact_properties(row) -> dict` — the property values set on a contact row (no fallbacks).
- `property_fallbacks(tx) -> dict` — each contact property key → its `fallback_value` (or None).
- `require_segment(tx, segment_id) -> Row`, `require_topic(tx, topic_id) -> Row` — the row; 404 if unknown.
- `update_contact_topics(tx, id_or_email, topics) -> dict` — as PATCH /contacts/{id}/topics; emits
  `contact.topics.updated` with the changed topics.

A contact row has `id, email, first_name, last_name, unsubscribed (0/1), properties (JSON text),
created_at, updated_at` (timestamps in the db form of `core/clock.py`).
"""

from __future__ import annotations

from typing import Any

from emulator.resources.contacts import (
    import_steps,
    imports,
    metrics,
    properties,
    segments,
    service,
    store,
    topics,
)
from emulator.resources.contacts.properties import property_fallbacks
from emulator.resources.contacts.segments import (
    add_contact_to_segment,
    segment_audience,
    segment_contacts,
    segment_members_after,
    segment_size,
)
from emulator.resources.contacts.service import create_contact, delete_contact, get_contact, update_contact
from emulator.resources.contacts.store import contact_properties, find_contact, require_segment, require_topic
from emulator.resources.contacts.topics import topic_subscription, update_contact_topics

TABLES = [*store.TABLES, *import_steps.TABLES]
OPS = [*imports.OPS, *service.OPS, *segments.OPS, *metrics.OPS, *topics.OPS, *properties.OPS]


def install(emu: Any) -> None:
    imports.install(emu)

__all__ = [
    "OPS",
    "TABLES",
    "add_contact_to_segment",
    "contact_properties",
    "create_contact",
    "delete_contact",
    "find_contact",
    "get_contact",
    "install",
    "property_fallbacks",
    "require_segment",
    "require_topic",
    "segment_audience",
    "segment_contacts",
    "segment_members_after",
    "segment_size",
    "topic_subscription",
    "update_contact",
    "update_contact_topics",
]
