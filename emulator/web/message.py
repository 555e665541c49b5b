"""One message shaped for the message view. Sent mail comes from the outbox's `detail` (emulator/
outbox.py) and the stored message from `email_eml` (emulator/resources/emails.py); received mail from
the receiving tables (emulator/resources/receiving.py)."""

from __future__ import annotations

import json
from email import policy
from email.parser import BytesHeaderParser
from typing import TYPE_CHECKING, Any

from emulator.control import labels, outbox, qa
from emulator.control.downloads import INLINE_TYPES
from emulator.core.net import allows_outbound
from emulator.resources.emails.service import email_eml
from emulator.web.frame import dark_capable, dark_styles, remote_count, rewrite_cids
from emulator.web.listing import SENT, Box, Filters
from emulator.web.source import source_of
from emulator.web.stepping import neighbours

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

# The raw view shows this much; the .eml download always has everything.
RAW_PREVIEW_BYTES = 256 * 1024


async def message_row(tx: Tx, box: Box, message_id: str) -> Row | None:
    return await tx.one(f"SELECT * FROM {box.table} WHERE account = ? AND id = ?",
                        [tx.account, message_id])


async def raw_of(tx: Tx, box: Box, row: Row) -> bytes:
    if box is SENT:
        return await email_eml(tx, row)
    return bytes(row["raw"] or b"")


def _header_pairs(raw: bytes) -> list[tuple[str, str]]:
    parsed = BytesHeaderParser(policy=policy.default).parsebytes(raw)
    return [(name, str(value)) for name, value in parsed.items()]


def _file(box: Box, message_id: str, part: dict[str, Any]) -> dict[str, Any]:
    base = f"{box.url}/{message_id}/attachments/{part['id']}"
    content_type = part["content_type"] or "application/octet-stream"
    return {
        "id": part["id"], "filename": part["filename"] or "attachment", "content_type": content_type,
        "content_id": (part["content_id"] or "").strip("<>") or None, "size": part["size"],
        "url": base, "inline_url": f"{base}?inline=1", "previewable": content_type.lower() in INLINE_TYPES,
    }


async def attachments_of(tx: Tx, box: Box, message_id: str) -> list[dict[str, Any]]:
    found = await tx.all(
        f"SELECT id, filename, content_type, content_id, size FROM {box.attachments} "
        "WHERE account = ? AND email_id = ? ORDER BY seq", [tx.account, message_id])
    return [_file(box, message_id, part) for part in found]


async def attachment_row(tx: Tx, box: Box, message_id: str, attachment_id: str) -> Row | None:
    return await tx.one(
        f"SELECT filename, content_type, content FROM {box.attachments} "
        "WHERE account = ? AND email_id = ? AND id = ?", [tx.account, message_id, attachment_id])


def framed_html(row: Row, attachments: list[dict[str, Any]]) -> str:
    urls = {a["content_id"]: a["inline_url"] for a in attachments if a["content_id"]}
    return rewrite_cids(row["html"] or "", urls)


def _json_list(text: str | None) -> list[Any]:
    value = json.loads(text) if text else []
    return value if isinstance(value, list) else []


async def _sent_fields(tx: Tx, row: Row) -> dict[str, Any]:
    detail = await outbox.detail(tx, row)
    return {
        "from": detail["from"], "to": detail["to"], "cc": detail["cc"], "bcc": detail["bcc"],
        "reply_to": detail["reply_to"], "subject": detail["subject"], "status": detail["last_event"],
        "tags": detail["tags"], "created_at": detail["created_at"], "scheduled_at": detail["scheduled_at"],
        "message_id": detail["message_id"], "text": detail["text"], "html": detail["html"] or "",
        "headers": [(h["name"], h["value"]) for h in detail["message_headers"]],
        "attachments": [_file(SENT, row["id"], part) for part in detail["attachments"]],
        "labels": await labels.labels_of(tx, row["id"]),
    }


async def _received_fields(tx: Tx, box: Box, row: Row) -> dict[str, Any]:
    return {
        "from": row["from_addr"], "to": _json_list(row["to_addrs"]), "cc": _json_list(row["cc"]),
        "bcc": _json_list(row["bcc"]), "reply_to": _json_list(row["reply_to"]),
        "subject": row["subject"] or "", "status": None, "tags": [], "created_at": row["created_at"],
        "scheduled_at": None, "message_id": row["message_id"], "text": row["text"],
        "html": row["html"] or "", "headers": _header_pairs(bytes(row["raw"] or b"")),
        "attachments": await attachments_of(tx, box, row["id"]), "labels": [],
    }


def _tabs(has_html: bool, checks: bool) -> list[tuple[str, str]]:
    tabs = [("html", "HTML")] if has_html else []
    tabs += [("text", "Text"), ("headers", "Headers")]
    tabs += [("source", "HTML source")] if has_html else []
    tabs += [("raw", "Raw"), ("activity", "Activity")]
    return [*tabs, ("checks", "Checks")] if checks else tabs


def _raw_preview(raw: bytes) -> str:
    text = raw[:RAW_PREVIEW_BYTES].decode("utf-8", "replace")
    if len(raw) > RAW_PREVIEW_BYTES:
        text += "\n… (truncated: download the .eml for the whole message)"
    return text


async def view_model(tx: Tx, box: Box, row: Row, remote: bool, filters: Filters) -> dict[str, Any]:
    """`filters`: those of the list the message was opened from (its neighbours and the way back)."""
    fields = await (_sent_fields(tx, row) if box is SENT else _received_fields(tx, box, row))
    html, base = fields.pop("html"), f"{box.url}/{row['id']}"
    # The checks themselves run after the transaction (views.message calls qa.report), off the loop.
    checks = await qa.material(tx, row) if box is SENT else None
    return {
        **fields, "id": row["id"], "kind": box.name, "has_html": bool(html), "qa": checks,
        "remote_count": remote_count(html), "remote": remote, "tabs": _tabs(bool(html), checks is not None),
        "raw": _raw_preview(await raw_of(tx, box, row)), "dark_capable": dark_capable(html),
        "dark_styles": dark_styles(html),
        "source": source_of(html) if html else None,
        "url": base, "frame_url": f"{base}/frame" + ("?remote=1" if remote else ""),
        "eml_url": f"{base}/raw.eml", "live_url": f"{base}/live", "spam_url": f"{base}/spam",
        **await neighbours(tx, box, filters, row["seq"]), "outbound": _outbound(tx),
    }


def _outbound(tx: Tx) -> dict[str, bool]:
    """Which outgoing actions the view offers (web/outbound.py; the others name their flag)."""
    settings = tx.emu.settings
    return {"link_check": allows_outbound(settings.link_check, settings.host),
            "release": allows_outbound(settings.release, settings.host)}
