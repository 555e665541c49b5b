"""Sent-email attachments and share links (reference/emails.md §7–§9), with the local URLs they name.

The real service signs CDN URLs; the emulator serves the bytes itself under `/_emulator/files/...` and
the shared view under `/_emulator/shared`, both guarded by an HMAC over the ids and the expiry, keyed by
the seed (deterministic, and good enough to stop guessing URLs on a local tool).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core.clock import iso_z
from emulator.core.errors import invalid, not_found
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.emails.service import check_uuid, get_email_row

if TYPE_CHECKING:
    from emulator.core.db import Host, Row, Tx
    from emulator.core.emulator import Emulator

DOWNLOAD_LIFETIME = timedelta(hours=1)  # documented for received attachments; reused [rec]
SHARE_DEFAULT = timedelta(hours=48)
SHARE_MAX = timedelta(hours=48)
RECEIVED = "received_emails"  # emulator/resources/receiving.py: shares work for received mail too
_PART = r"([0-9]+(?:\.[0-9]+)?)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)(?![a-z])"
DURATION_PART = re.compile(_PART)
DURATION = re.compile(rf"{_PART}(?:\s*(?:,\s*|and\s+)?{_PART})*")
DURATION_MAX_LENGTH = 64
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _key(emu: Host) -> bytes:
    return hashlib.sha256(f"resend-emulator-files:{emu.settings.seed}".encode()).digest()


def sign(emu: Host, *parts: str) -> str:
    mac = hmac.new(_key(emu), "|".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def _base_url(req: ApiRequest) -> str:
    return str(req.raw.base_url).rstrip("/")


# ---- attachments -------------------------------------------------------------------------------

def attachment_item(emu: Host, row: Row, base_url: str, now: datetime) -> dict[str, Any]:
    expires = now + DOWNLOAD_LIFETIME
    stamp = str(int(expires.timestamp()))
    signature = sign(emu, row["email_id"], row["id"], stamp)
    item: dict[str, Any] = {
        "id": row["id"], "filename": row["filename"], "size": row["size"],
        "content_type": row["content_type"], "content_disposition": row["disposition"],
        # Always present, null when not inline (as received attachments show it).
        "content_id": row["content_id"] or None,
    }
    item["download_url"] = (f"{base_url}/_emulator/files/emails/{row['email_id']}/attachments/{row['id']}"
                            f"?expires={stamp}&signature={signature}")
    item["expires_at"] = iso_z(expires)
    return item


async def list_attachments(tx: Tx, email_id: str, query: Any, base_url: str) -> dict[str, Any]:
    await get_email_row(tx, email_id)
    page = parse_page(query, optional_limit=True, uuid_cursors=True)
    rows, has_more = await fetch_page(
        tx, "email_attachments", page, "account = ? AND email_id = ?", [tx.account, email_id],
        columns="id, email_id, filename, size, content_type, disposition, content_id",
    )
    return list_body([attachment_item(tx.emu, row, base_url, tx.now) for row in rows], has_more)


async def get_attachment(tx: Tx, email_id: str, attachment_id: str, base_url: str) -> dict[str, Any]:
    await get_email_row(tx, email_id)
    check_uuid(attachment_id, "attachment_id")
    row = await tx.one(
        "SELECT id, email_id, filename, size, content_type, disposition, content_id FROM email_attachments"
        " WHERE id = ? AND email_id = ? AND account = ?", (attachment_id, email_id, tx.account))
    if row is None:
        raise not_found("Attachment")
    return {"object": "attachment", **attachment_item(tx.emu, row, base_url, tx.now)}


async def http_list_attachments(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_attachments(tx, req.params["email_id"], req.query, _base_url(req))


async def http_get_attachment(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_attachment(tx, req.params["email_id"], req.params["attachment_id"], _base_url(req))


# ---- share -------------------------------------------------------------------------------------

def parse_duration(value: Any) -> timedelta:
    """`10m`, `2 hours`, `1 day`, `1h 30m`, `1.5h` (emails.md §7): one or more number-unit parts, longest
    unit names first so `hours` is not read as `h` + garbage; at most 48 hours. A JSON number is refused:
    the field is a string [openapi] and a bare number names no unit."""
    message = ("Invalid `expires_in` field. Use a duration such as `10m`, `2 hours`, `1 day` or `1h 30m`,"
               " at most 48 hours.")
    if not isinstance(value, str) or len(value) > DURATION_MAX_LENGTH:
        raise invalid(message)
    text = value.strip().lower()
    if not DURATION.fullmatch(text):
        raise invalid(message)
    seconds = sum(float(number) * UNIT_SECONDS[unit[0]] for number, unit in DURATION_PART.findall(text))
    if not 0 < seconds <= SHARE_MAX.total_seconds():  # compared as a float: no timedelta overflow
        raise invalid(message)
    return timedelta(seconds=seconds)


async def _shareable(tx: Tx, email_id: str) -> None:
    """Sent or received emails can be shared [openapi]; received ones live in the receiving tables."""
    check_uuid(email_id)
    if await tx.one("SELECT 1 FROM emails WHERE id = ? AND account = ?", (email_id, tx.account)):
        return
    if RECEIVED in tx.db.tables and await tx.one(
            f"SELECT 1 FROM {RECEIVED} WHERE id = ? AND account = ?", (email_id, tx.account)):
        return
    raise not_found("Email")


async def share(tx: Tx, email_id: str, body: dict[str, Any], base_url: str) -> dict[str, Any]:
    await _shareable(tx, email_id)
    lifetime = SHARE_DEFAULT if body.get("expires_in") is None else parse_duration(body["expires_in"])
    claims = {"email_id": email_id, "account": tx.account,
              "exp": int((tx.now + lifetime).timestamp())}
    encoded = json.dumps(claims, separators=(",", ":")).encode()
    payload = base64.urlsafe_b64encode(encoded).decode().rstrip("=")
    token = f"{payload}.{sign(tx.emu, payload)}"
    return {"object": "email", "id": email_id, "url": f"{base_url}/_emulator/shared?token={token}"}


async def http_share(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await share(tx, req.params["email_id"], req.json_object(), _base_url(req))


# ---- the URLs themselves -----------------------------------------------------------------------

def expired(emu: Emulator, stamp: int) -> bool:
    return emu.clock.now().timestamp() > stamp


OPS = [
    Op("emails/share", "POST", "/emails/{email_id}/share", http_share),
    Op("emails/list-attachments", "GET", "/emails/{email_id}/attachments", http_list_attachments),
    Op("emails/get-attachment", "GET", "/emails/{email_id}/attachments/{attachment_id}", http_get_attachment),
]
