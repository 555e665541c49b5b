"""The webhook event catalogue and the fan-out from an emitted event to one delivery per webhook.

Reference: reference/webhooks.md §5 (event types), envelope `{type, created_at, data}` [openapi].
`fan_out` runs inside the emitting transaction (events.on_emit), so a rolled-back request leaves no
delivery behind, and the delivery job is a row: it survives a restart with a file database.
"""

from __future__ import annotations

import hashlib
import json
import string
from typing import TYPE_CHECKING, Any

from emulator.core.clock import iso_z
from emulator.core.jobs import schedule
from emulator.core.jsontext import compact

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.events import Event

DELIVER_JOB = "webhook.deliver"

EMAIL_EVENTS = (
    "email.sent", "email.scheduled", "email.delivered", "email.delivery_delayed", "email.complained",
    "email.bounced", "email.opened", "email.clicked", "email.received", "email.failed", "email.suppressed",
)
CONTACT_EVENTS = ("contact.created", "contact.updated", "contact.deleted", "contact.topics.updated")
DOMAIN_EVENTS = ("domain.created", "domain.updated", "domain.deleted")
SUPPRESSION_EVENTS = ("suppression.added", "suppression.removed")
TOPIC_EVENTS = ("topic.created", "topic.updated", "topic.deleted")
INBOX_EVENTS = (
    "inbox.created", "inbox.updated", "inbox.deleted", "inbox.thread.created", "inbox.thread.folder.updated",
    "inbox.thread.assigned", "inbox.thread.unassigned", "inbox.thread.labels.updated",
    "inbox.email.received", "inbox.email.sent", "inbox.draft.created", "inbox.draft.updated",
    "inbox.draft.sent", "inbox.draft.deleted",
)
# Every type of reference §5 is subscribable (its [recommendation]); the SDK enums are subsets.
EVENT_TYPES: tuple[str, ...] = (
    *EMAIL_EVENTS, *CONTACT_EVENTS, *DOMAIN_EVENTS, *SUPPRESSION_EVENTS, *TOPIC_EVENTS, *INBOX_EVENTS,
)

_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_PAIRS = [high + low for high in _BASE62 for low in _BASE62]  # two digits per division: half as many
_NINE = 62**9  # nine digits: a chunk of 20 bytes' 27 that fits a machine word


def base62(raw: bytes) -> str:
    """Fixed-width base62 of 20 bytes: the 27 characters of a Svix id (`msg_2dGvTq8…`).

    Cut into three nine-digit chunks first: the divisions of small numbers that follow cost about half
    those of the whole 160-bit number (twice per delivery, issue 28)."""
    high, low = divmod(int.from_bytes(raw, "big"), _NINE)
    high, middle = divmod(high, _NINE)
    pairs, chunks = _PAIRS, []
    for chunk in (high, middle, low):  # each < 62**9; the first digit is < 62, the rest go in pairs
        two = chunk // 3844
        four = two // 3844
        six = four // 3844
        eight = six // 3844
        chunks.append(_BASE62[eight] + pairs[six - eight * 3844] + pairs[four - six * 3844]
                      + pairs[two - four * 3844] + pairs[chunk - two * 3844])
    return "".join(chunks)


# Svix ids are KSUIDs: 4 bytes that order them (for Svix, seconds since its 2014 epoch), then 16 random.
# Here the 4 bytes count rather than time, since ids derive from the seed and not the clock (the same
# requests give the same ids), starting where they read like Svix ids of today (`msg_2…`). Ordered, a
# new message or attempt goes to the end of its table's id index instead of anywhere in it (issue 28:
# a message and its attempt cost ~6 µs less of SQLite's time beside 30 000 others, in memory; more once
# the index outgrows the CPU's caches, little in a burst of 2 000).
_ORDER_START = 304_067_200  # 2024-01-01 in KSUID seconds


def svix_id(prefix: str, order: int, raw: bytes) -> str:
    """`prefix` and the 27 base62 digits of `order`'s 4 bytes followed by the 16 of `raw`."""
    return prefix + base62(((_ORDER_START + order) & 0xFFFF_FFFF).to_bytes(4, "big") + raw)


def message_id(tx: Tx) -> str:
    """`msg_…`, ordered by the id sequence."""
    number, raw = tx.emu.ids.numbered(16)
    return svix_id("msg_", number, raw)


def attempt_id(seed: int, message_seq: int, message_id: str, ordinal: int) -> str:
    """`atmpt_…` derived from the message and the attempt's rank, not from the shared id counter:
    deliveries finish in network order, and that order must not shift the ids of later resources.
    Ordered by the message's row (`message_seq`): attempts are made about in the order of their messages."""
    digest = hashlib.shake_256(f"{seed}:attempt:{message_id}:{ordinal}".encode()).digest(16)
    return svix_id("atmpt_", message_seq, digest)


def envelope(event: Event) -> str:
    """The exact body every delivery of this event sends (signed byte for byte)."""
    body = {"type": event["type"], "created_at": iso_z(event["created_at"]), "data": event["data"]}
    return compact(body)


CACHE = "webhooks"


async def subscribers(tx: Tx, event_type: str) -> list[str]:
    # Every event asks this; the enabled webhooks of all accounts are read once and cached until a
    # webhook changes (see `changed`), so most events cost no database trip here.
    enabled = await _enabled(tx)
    return [hook["id"] for hook in enabled.values()
            if hook["account"] == tx.account and event_type in hook["events"]]


async def _enabled(tx: Tx) -> dict[str, Row]:
    """Enabled webhook id → its row (`events` as a set), in creation order, from the cache."""
    enabled: dict[str, Row] | None = tx.emu.cache.get(CACHE)
    if enabled is None:
        rows = await tx.all("SELECT id, account, events, endpoint, secret, previous_secret, previous_until"
                            " FROM webhooks WHERE status = 'enabled' ORDER BY seq")
        enabled = tx.emu.cache[CACHE] = {row["id"]: {**row, "events": set(json.loads(row["events"]))}
                                         for row in rows}
    return enabled


def enabled_hook(emu: Any, webhook_id: str) -> Row | None:
    """The webhook's row if it is enabled, from the cache; None when disabled, deleted, or when the
    cache was dropped by a change (then only the database knows)."""
    enabled: dict[str, Row] | None = emu.cache.get(CACHE)
    return None if enabled is None else enabled.get(webhook_id)


def subscriptions_changed(tx: Tx) -> None:
    """Call in any transaction that writes the webhooks table (the cache is dropped now and at commit):
    events read their subscribers from it, and deliveries their endpoint and secrets."""
    emu = tx.emu
    emu.invalidate(CACHE)
    tx.after_commit(lambda: emu.invalidate(CACHE))


async def fan_out(tx: Tx, event: Event) -> None:
    """One delivery (a `msg_…` message plus a due job) per subscribed, enabled webhook of the account."""
    hooks = await subscribers(tx, event["type"])
    if not hooks:
        return
    body = envelope(event)
    for webhook_id in hooks:
        new_id = message_id(tx)
        await tx.insert("webhook_messages", {
            "id": new_id, "account": tx.account, "webhook_id": webhook_id, "event_id": event["id"],
            "type": event["type"], "payload": body, "status": "pending", "attempts": 0,
            "next_attempt_at": tx.now_db, "created_at": tx.now_db,
        })
        # Started at once when it can be: the delivery then signs from the cached webhook and this body
        # (ledger.py), with no read of its message first.
        await schedule(tx, DELIVER_JOB, tx.now, {"message_id": new_id, "mode": "auto",
                                                 "webhook_id": webhook_id},
                       at_once=True, memo={"body": body})


def message_payload(row: dict[str, Any]) -> Any:
    return json.loads(row["payload"])
