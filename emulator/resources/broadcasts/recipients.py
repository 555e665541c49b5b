"""A sent broadcast's recipients by delivery status, its clicked links, and unsubscribing through the
link in its emails (reference/broadcasts.md §2.7, §2.8).

Statuses come from the catalogue events of each recipient's email (`email.delivered`, `email.opened`,
...), so whatever produces those events — the delivery simulation, tracked opens and clicks, scripted
outcomes — shows here. Item ids are opaque offset cursors (`b2Zmc2V0OjA` = base64 `offset:0`, as in the
reference's examples), and so are `after`/`before`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core.errors import MISSING_REQUIRED_PARAMETER, ApiError, invalid, not_found
from emulator.core.pages import BAD_CURSOR_MESSAGE, list_body, parse_page
from emulator.core.typed import whole_number_or_none
from emulator.resources.broadcasts.store import require_broadcast
from emulator.resources.contacts import update_contact, update_contact_topics

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TYPES = ("sent", "delivered", "opened", "clicked", "bounced", "complained", "unsubscribed", "suppressed")
BOUNCE_TYPES = ("permanent", "transient", "undetermined")


def cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode().rstrip("=")


def _offset(value: str) -> int:
    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise invalid(BAD_CURSOR_MESSAGE) from None
    prefix, _, number = text.partition(":")
    offset = whole_number_or_none(number) if prefix == "offset" else None
    if offset is None:
        raise invalid(BAD_CURSOR_MESSAGE)
    return offset


def paginate(items: list[dict[str, Any]], query: Any, optional_limit: bool = False) -> dict[str, Any]:
    """Offset pages over an already ordered list; each item's `id` is its own cursor."""
    page = parse_page(query, optional_limit=optional_limit)
    for index, item in enumerate(items):
        item["id"] = cursor(index)
    if page.limit is None:
        return list_body(items, False)
    if page.after is not None:
        start = _offset(page.after) + 1
        chosen = items[start:start + page.limit]
        return list_body(chosen, start + page.limit < len(items))
    if page.before is not None:
        end = _offset(page.before)
        start = max(0, end - page.limit)
        return list_body(items[start:end], start > 0)
    return list_body(items[:page.limit], len(items) > page.limit)


async def _events(tx: Tx, email_ids: list[str]) -> dict[str, list[Row]]:
    if not email_ids:
        return {}
    marks = ",".join("?" for _ in email_ids)
    rows = await tx.all(f"SELECT subject_id, type, data FROM events"
                        f" WHERE account = ? AND subject_id IN ({marks}) ORDER BY seq",
                        (tx.account, *email_ids))
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row["subject_id"], []).append(row)
    return grouped


def _bounce_type(events: list[Row]) -> str | None:
    for event in events:
        if event["type"] == "email.bounced":
            kind = str(json.loads(event["data"]).get("bounce", {}).get("type", "")).lower()
            return kind if kind in ("permanent", "transient") else "undetermined"
    return None


def _entry(recipient: Row, events: list[Row], wanted: str) -> dict[str, Any] | None:
    """The list item for `recipient` if it is in the `wanted` group, else None."""
    types = Counter(event["type"] for event in events)
    item: dict[str, Any] = {"id": "", "contact_id": recipient["contact_id"], "email": recipient["email"]}
    if wanted == "sent":
        return item if recipient["email_id"] else None
    if wanted == "suppressed":
        return item if recipient["status"] == "suppressed" or types["email.suppressed"] else None
    if wanted == "unsubscribed":
        return item if recipient["unsubscribed"] else None
    if wanted in ("delivered", "complained"):
        return item if types[f"email.{wanted}"] else None
    if wanted == "bounced":
        bounce_type = _bounce_type(events)
        return {**item, "bounce_type": bounce_type} if bounce_type else None
    count = types[f"email.{wanted}"]
    if not count:
        return None
    item["count"] = count
    if wanted == "clicked":
        links = Counter(json.loads(event["data"])["click"]["link"]
                        for event in events if event["type"] == "email.clicked")
        item["clicked_links"] = [{"url": url, "clicks": clicks} for url, clicks in links.most_common()]
    return item


async def list_recipients(tx: Tx, broadcast_id: str, query: Any) -> dict[str, Any]:
    broadcast = await require_broadcast(tx, broadcast_id, uuid_path=True)
    wanted = query.get("type")
    if wanted is None:
        raise ApiError(MISSING_REQUIRED_PARAMETER, "Missing `type` query parameter.")
    if wanted not in TYPES:
        raise invalid(f"Invalid `type` query parameter. Must be one of: {', '.join(TYPES)}.")
    bounce_filter = query.get("bounce_type")
    if bounce_filter is not None and (wanted != "bounced" or bounce_filter not in BOUNCE_TYPES):
        raise invalid("The `bounce_type` query parameter is only allowed with `type=bounced` and must be one"
                      f" of: {', '.join(BOUNCE_TYPES)}.")
    recipients = await tx.all("SELECT * FROM broadcast_recipients WHERE account = ? AND broadcast_id = ?"
                              " ORDER BY seq", (tx.account, broadcast["id"]))
    events = await _events(tx, [r["email_id"] for r in recipients if r["email_id"]])
    items = []
    for recipient in recipients:
        if query.get("email") and recipient["email"].lower() != str(query["email"]).strip().lower():
            continue
        item = _entry(recipient, events.get(recipient["email_id"] or "", []), wanted)
        if item is not None and (bounce_filter is None or item.get("bounce_type") == bounce_filter):
            items.append(item)
    return paginate(items, query)


async def clicked_links(tx: Tx, broadcast_id: str, query: Any) -> dict[str, Any]:
    """Every link clicked in the broadcast's emails, most clicked first."""
    broadcast = await require_broadcast(tx, broadcast_id, uuid_path=True)
    rows = await tx.all(
        "SELECT ev.subject_id, ev.data FROM events ev JOIN broadcast_recipients r"
        " ON r.account = ev.account AND r.email_id = ev.subject_id"
        " WHERE r.account = ? AND r.broadcast_id = ? AND ev.type = 'email.clicked' ORDER BY ev.seq",
        (tx.account, broadcast["id"]))
    clicks: Counter[str] = Counter()
    clickers: dict[str, set[str]] = {}
    for row in rows:
        url = json.loads(row["data"])["click"]["link"]
        clicks[url] += 1
        clickers.setdefault(url, set()).add(row["subject_id"])
    items = [{"id": "", "url": url, "clicks": count, "unique_clicks": len(clickers[url])}
             for url, count in clicks.most_common()]
    # The SDK's docstring: "If not provided, all clicked links will be returned without pagination."
    return paginate(items, query, optional_limit=True)


async def find_recipient(tx: Tx, token: str) -> Row | None:
    """The recipient an unsubscribe link names, with its broadcast's topic (any account)."""
    return await tx.one(
        "SELECT r.*, b.topic_id AS topic_id, b.name AS broadcast_name, b.from_addr AS from_addr"
        " FROM broadcast_recipients r JOIN broadcasts b ON b.account = r.account AND b.id = r.broadcast_id"
        " WHERE r.token = ?", (token,))


async def unsubscribe(tx: Tx, recipient: Row, everything: bool) -> None:
    """One click on the link: out of the broadcast's topic when it has one (unless `everything`), else
    `unsubscribed` for every broadcast — as the real page does. Emits what the contacts API would."""
    if recipient["contact_id"] is None:
        raise not_found("Contact")
    if recipient["topic_id"] and not everything:
        await update_contact_topics(tx, recipient["contact_id"],
                                    [{"id": recipient["topic_id"], "subscription": "opt_out"}])
    else:
        await update_contact(tx, recipient["contact_id"], {"unsubscribed": True})
    tx.queue("UPDATE broadcast_recipients SET unsubscribed = 1 WHERE account = ? AND token = ?",
             (tx.account, recipient["token"]))


async def http_recipients(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_recipients(tx, req.params["id"], req.query)


async def http_clicked_links(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await clicked_links(tx, req.params["id"], req.query)


OPS = [
    Op("broadcasts/recipients", "GET", "/broadcasts/{id}/recipients", http_recipients),
    Op("broadcasts/list-clicked-links", "GET", "/broadcasts/{id}/clicked-links", http_clicked_links),
]
