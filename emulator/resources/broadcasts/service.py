"""Broadcasts: create, list, get, update, delete, duplicate, send, cancel (reference/broadcasts.md §2, §3).

Status: `draft` → (`send`) `queued` → `sent`, or `scheduled` → `queued` → `sent` when `scheduled_at` is
given; `cancel` puts a queued or scheduled broadcast back to `draft` (undocumented; the reference's
recommendation). The fan-out itself runs as a job (`fanout.py`) on the emulator clock.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.addresses import addresses, sender
from emulator.core.clock import to_db
from emulator.core.errors import invalid, missing_field
from emulator.core.jobs import schedule
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.broadcasts.store import list_item, require_broadcast, send_progress, serialize
from emulator.resources.contacts import require_segment, require_topic, segment_audience
from emulator.resources.emails import parse_scheduled_at, requested_schedule
from emulator.resources.emails.service import check_quota

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

SEND_JOB = "broadcast.send"
TEXT_FIELDS = ("name", "subject", "preview_text", "html", "text")


async def _segment(tx: Tx, body: dict[str, Any], required: bool) -> str | None:
    """`segment_id`, or the deprecated `audience_id` (the same record)."""
    field = "segment_id" if body.get("segment_id") is not None else "audience_id"
    value = validate.string(body, field)
    if value is None:
        if required:
            raise missing_field("segment_id")
        return None
    return str((await require_segment(tx, value))["id"])


async def _fields(tx: Tx, body: dict[str, Any], creating: bool) -> dict[str, Any]:
    """The columns `body` sets, checked in the order the reference lists them."""
    values: dict[str, Any] = {}
    segment_id = await _segment(tx, body, required=creating)
    if segment_id is not None:
        values["segment_id"] = segment_id
    if creating or "from" in body:
        values["from_addr"] = sender(body, required=True)
    if creating and body.get("subject") is None:
        raise missing_field("subject")
    for field in TEXT_FIELDS:
        if field in body:
            values[field] = validate.string(body, field)
    if "subject" in values and values["subject"] is None:
        raise missing_field("subject")
    if "reply_to" in body:
        reply_to = addresses(body, "reply_to")
        values["reply_to"] = json.dumps(reply_to) if reply_to is not None else None
    if body.get("topic_id") is not None:
        values["topic_id"] = (await require_topic(tx, str(validate.string(body, "topic_id"))))["id"]
    elif "topic_id" in body:
        values["topic_id"] = None
    return values


def _send_flags(body: dict[str, Any]) -> tuple[bool, Any]:
    send = validate.boolean(body, "send") or False
    scheduled_at = requested_schedule(body)
    if scheduled_at is not None and not send:
        raise invalid("The `scheduled_at` field can only be used together with `send: true`.")
    return send, scheduled_at


async def create_broadcast(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    send, scheduled_at = _send_flags(body)
    values = await _fields(tx, body, creating=True)
    row: Row = {"id": tx.new_id(), "account": tx.account, "status": "draft", "created_at": tx.now_db,
                "name": None, "reply_to": None, "preview_text": None, "html": None, "text": None,
                "topic_id": None, "scheduled_at": None, "sent_at": None, **values}
    await tx.insert("broadcasts", row)
    if send:
        await _start_sending(tx, row, scheduled_at)
    return {"object": "broadcast", "id": row["id"]}


async def list_broadcasts(tx: Tx, query: Any) -> dict[str, Any]:
    """Seed §4.5 rule 3: every broadcast when `limit` is omitted."""
    rows, has_more = await fetch_page(tx, "broadcasts", parse_page(query, optional_limit=True))
    return list_body([list_item(row) for row in rows], has_more)


async def get_broadcast(tx: Tx, broadcast_id: str) -> dict[str, Any]:
    return serialize(await require_broadcast(tx, broadcast_id))


async def update_broadcast(tx: Tx, broadcast_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await require_broadcast(tx, broadcast_id)
    if row["status"] != "draft":
        raise invalid(f"Only draft broadcasts can be updated. This broadcast is `{row['status']}`.")
    values = await _fields(tx, body, creating=False)
    await tx.update("broadcasts", row["id"], values)
    return {"object": "broadcast", "id": row["id"]}


async def delete_broadcast(tx: Tx, broadcast_id: str) -> dict[str, Any]:
    """Drafts, and scheduled broadcasts (their send is called off with them)."""
    row = await require_broadcast(tx, broadcast_id)
    if row["status"] not in ("draft", "scheduled"):
        raise invalid("Only draft or scheduled broadcasts can be deleted."
                      f" This broadcast is `{row['status']}`.")
    await tx.run("DELETE FROM broadcasts WHERE account = ? AND id = ?", (tx.account, row["id"]))
    return {"object": "broadcast", "id": row["id"], "deleted": True}


# The docs' duplicate-broadcast page: the copy is named after the source with ` (copy)` appended,
# truncated to 70 characters. Assumed: the name with its suffix is cut to 70, and an unnamed broadcast's
# copy stays unnamed (the page names no fallback).
COPY_SUFFIX, COPY_NAME_LENGTH = " (copy)", 70


async def duplicate_broadcast(tx: Tx, broadcast_id: str) -> dict[str, Any]:
    """A new draft with the same content, whatever the original's status [docs]."""
    row = await require_broadcast(tx, broadcast_id)
    name = None if row["name"] is None else (row["name"] + COPY_SUFFIX)[:COPY_NAME_LENGTH]
    copy = {**row, "id": tx.new_id(), "name": name, "status": "draft", "scheduled_at": None,
            "sent_at": None, "created_at": tx.now_db}
    copy.pop("seq")
    await tx.insert("broadcasts", copy)
    return {"object": "broadcast", "id": copy["id"]}


async def send_broadcast(tx: Tx, broadcast_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await require_broadcast(tx, broadcast_id)
    if row["status"] != "draft":
        raise invalid(f"Only draft broadcasts can be sent. This broadcast is `{row['status']}`.")
    await _start_sending(tx, row, requested_schedule(body))
    return {"id": row["id"]}


async def _check_quota(tx: Tx, row: Row) -> None:
    """Broadcast emails count against the daily and monthly quotas like any other (one per recipient).
    The reference is silent on a broadcast that would pass them: assumed, it is refused whole with the
    emails endpoint's 429 (`daily_quota_exceeded` / `monthly_quota_exceeded`) before anything is sent,
    counting the audience it would email now, on the day it is asked for, as a scheduled email counts
    on the day it is sent to the API. The fan-out then counts what it really sends (fanout.py)."""
    settings = tx.emu.settings
    if settings.daily_quota or settings.monthly_quota:
        await check_quota(tx, await segment_audience(tx, row["segment_id"], row["topic_id"]))


async def _start_sending(tx: Tx, row: Row, scheduled_at: Any) -> None:
    if row["html"] is None and row["text"] is None:
        raise invalid("Missing broadcast content. Provide `html` or `text` before sending.")
    await _check_quota(tx, row)
    due = tx.now if scheduled_at is None else parse_scheduled_at(scheduled_at, tx.now)
    later = due > tx.now
    await tx.update("broadcasts", row["id"], {"status": "scheduled" if later else "queued",
                                              "scheduled_at": to_db(due) if later else None})
    await schedule(tx, SEND_JOB, due, {"broadcast_id": row["id"]})


async def cancel_broadcast(tx: Tx, broadcast_id: str) -> dict[str, Any]:
    row = await require_broadcast(tx, broadcast_id, uuid_path=True)
    if row["status"] not in ("queued", "scheduled"):
        raise invalid(f"Only queued or scheduled broadcasts can be canceled. This broadcast is"
                      f" `{row['status']}`.")
    if await send_progress(tx, row["id"]) is not None:
        # Its emails are going out (chunk by chunk): calling it off now would leave half the segment sent.
        raise invalid("This broadcast is already being sent and can no longer be canceled.")
    await tx.update("broadcasts", row["id"], {"status": "draft", "scheduled_at": None})
    return {"object": "broadcast", "id": row["id"]}


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_broadcast(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_broadcasts(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_broadcast(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_broadcast(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_broadcast(tx, req.params["id"])


async def http_duplicate(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await duplicate_broadcast(tx, req.params["id"])


async def http_send(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await send_broadcast(tx, req.params["id"], req.json_object())


async def http_cancel(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await cancel_broadcast(tx, req.params["id"])


OPS = [
    Op("broadcasts/create", "POST", "/broadcasts", http_create, status=201),
    Op("broadcasts/list", "GET", "/broadcasts", http_list),
    Op("broadcasts/get", "GET", "/broadcasts/{id}", http_get),
    Op("broadcasts/update", "PATCH", "/broadcasts/{id}", http_update),
    Op("broadcasts/remove", "DELETE", "/broadcasts/{id}", http_delete),
    Op("broadcasts/send", "POST", "/broadcasts/{id}/send", http_send),
    Op("broadcasts/cancel", "POST", "/broadcasts/{id}/cancel", http_cancel),
    # Not in the OpenAPI document; the docs' path, status unstated there. 200: the seed's rule for every
    # duplicate (00-general §9, as `POST /templates/{id}/duplicate`) outranks broadcasts.md's 201 suggestion.
    Op("broadcasts/duplicate", "POST", "/broadcasts/{id}/duplicate", http_duplicate),
]
