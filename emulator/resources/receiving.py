"""Receiving: inbound mail per account, its attachments and raw `.eml`. Reference: reference/receiving.md.

Mail arrives (SMTP or the `/_emulator/inbound` control routes, see emulator/control/inbound.py) for
addresses on a receiving-enabled domain of an account, or on the account's managed `<id>.resend.app`
subdomain. Downloads are signed URLs served by emulator/control/downloads.py (no API key, like Resend's
CDN links).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import errors
from emulator.core.accounts import MANAGED_SUFFIX, managed_domain
from emulator.core.clock import from_db, iso_z
from emulator.core.db import Host, Tx
from emulator.core.errors import ApiError, invalid, not_found
from emulator.core.events import emit
from emulator.core.pages import UUID, fetch_page, list_body, parse_page
from emulator.mime.intake import Parsed, bare, parse_async
from emulator.resources.domains.service import receiving_domains
from emulator.resources.emails.service import email_eml, spend_quota
from emulator.resources.inboxes import accept_inbound

if TYPE_CHECKING:
    from emulator.core.db import Row
    from emulator.core.emulator import Emulator

TABLES = [
    # JSON columns: to_addrs, cc, bcc, reply_to, received_for (lists), headers, authentication (objects).
    """CREATE TABLE IF NOT EXISTS received_emails (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        from_addr TEXT NOT NULL,
        to_addrs TEXT NOT NULL,
        cc TEXT NOT NULL,
        bcc TEXT NOT NULL,
        reply_to TEXT NOT NULL,
        received_for TEXT NOT NULL,
        subject TEXT,
        message_id TEXT NOT NULL,
        html TEXT,
        text TEXT,
        headers TEXT NOT NULL,
        authentication TEXT NOT NULL,
        raw BLOB NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS received_emails_account ON received_emails (account, seq)",
    """CREATE TABLE IF NOT EXISTS received_attachments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email_id TEXT NOT NULL,
        filename TEXT,
        content_type TEXT NOT NULL,
        content_id TEXT,
        content_disposition TEXT NOT NULL,
        size INTEGER NOT NULL,
        content BLOB NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS received_attachments_email ON received_attachments (email_id, seq)",
]
URL_LIFETIME = timedelta(hours=1)  # documented: download URLs last one hour
FILES_PREFIX = "/_emulator/files/receiving"
AUTH_RESULTS = ("pass", "fail", "gray", "processing_failed", "unknown")
# [rec] The emulator checks no SPF/DKIM/DMARC; "pass" unless the injecting test says otherwise.
DEFAULT_AUTHENTICATION = {"spf": "pass", "dkim": "pass", "dmarc": "pass"}
HTML_FORMATS = ("data_uri", "cid")


# ---- routing: which account receives an address ---------------------------------------------------

async def _account_of(tx: Tx, domain: str) -> str | None:
    if domain.endswith(MANAGED_SUFFIX):
        for row in await tx.all("SELECT id FROM accounts"):
            if managed_domain(row["id"]) == domain:
                return str(row["id"])
        return None
    return (await receiving_domains(tx)).get(domain)


async def route(tx: Tx, recipients: Sequence[str]) -> dict[str, list[str]]:
    """Receiving recipients grouped by the account that owns them (others are left out)."""
    routes: dict[str, list[str]] = {}
    cache: dict[str, str | None] = {}
    for recipient in recipients:
        domain = bare(recipient).rpartition("@")[2].rstrip(".")
        if domain not in cache:
            cache[domain] = await _account_of(tx, domain)
        account, address = cache[domain], bare(recipient)
        if account is not None and address not in routes.setdefault(account, []):
            routes[account].append(address)
    return {account: rcpts for account, rcpts in routes.items() if rcpts}


# ---- storing ------------------------------------------------------------------------------------

def _headers_object(parsed: Parsed) -> dict[str, str]:
    # [rec] One value per lower-cased name, the first occurrence (the newest trace header); the raw
    # `.eml` keeps every one.
    headers: dict[str, str] = {}
    for name, value in parsed.headers:
        headers.setdefault(name.lower(), value)
    return headers


def _authentication(value: dict[str, Any] | None) -> dict[str, str]:
    result = dict(DEFAULT_AUTHENTICATION)
    for key, outcome in (value or {}).items():
        if key not in result or outcome not in AUTH_RESULTS:
            raise invalid(f"`authentication.{key}` must be one of: {', '.join(AUTH_RESULTS)}.")
        result[key] = outcome
    return result


async def _store(tx: Tx, raw: bytes, parsed: Parsed, received_for: list[str],
                 authentication: dict[str, str]) -> Row:
    email_id = tx.new_id()
    row: Row = {
        "id": email_id, "account": tx.account, "from_addr": parsed.from_ or "",
        "to_addrs": json.dumps(parsed.to), "cc": json.dumps(parsed.cc), "bcc": json.dumps(parsed.bcc),
        "reply_to": json.dumps(parsed.reply_to), "received_for": json.dumps(received_for),
        "subject": parsed.subject, "message_id": parsed.message_id or f"<{email_id}@inbound.resend.app>",
        "html": parsed.html, "text": parsed.text, "headers": json.dumps(_headers_object(parsed)),
        "authentication": json.dumps(authentication), "raw": raw, "created_at": tx.now_db,
    }
    await tx.insert("received_emails", row)
    await spend_quota(tx, 1, enforce=False)  # received mail counts towards the quota, and is never refused
    for part in parsed.attachments:
        await tx.insert("received_attachments", {
            "id": tx.new_id(), "account": tx.account, "email_id": email_id, "filename": part.filename,
            "content_type": part.content_type, "content_id": part.content_id,
            "content_disposition": part.disposition, "size": len(part.content), "content": part.content,
        })
    return row


async def receive(tx: Tx, raw: bytes, recipients: Sequence[str],
                  authentication: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Store `raw` once per account owning a recipient, each with its `email.received` event.

    Runs in the caller's transaction. Returns `[{id, received_for}]`, empty when no address receives.
    """
    return await deliver(tx, raw, await route(tx, recipients), authentication)


async def deliver(tx: Tx, raw: bytes, routes: dict[str, list[str]],
                  authentication: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    if not routes:
        return []
    parsed, outcome = await parse_async(raw), _authentication(authentication)
    stored = []
    for account, received_for in routes.items():
        inbox = tx.as_account(account)  # mail crosses accounts; the commit stays one
        row = await _store(inbox, raw, parsed, received_for, outcome)
        attachments = await _attachment_rows(inbox, row["id"])
        await emit(inbox, "email.received", event_data(row, attachments), subject_id=row["id"])
        await accept_inbound(inbox, row, attachments, received_for)
        stored.append({"id": row["id"], "received_for": received_for})
    return stored


async def _loopback(tx: Tx, event: dict[str, Any]) -> None:
    """A sent email (API or SMTP) to a receiving address arrives there too, as the real MX would see it."""
    if event["type"] != "email.sent":
        return
    recipients: list[str] = event["context"]["recipients"]
    receiving = await receiving_domains(tx)
    # Every send passes here: most go nowhere near a receiving domain, so rule them out cheaply.
    if not any(_may_receive(address, receiving) for address in recipients):
        return
    routes = await route(tx, recipients)
    row = await tx.one("SELECT * FROM emails WHERE id = ? AND account = ?",
                       (event["subject_id"], tx.account)) if routes else None
    if row is not None:
        await deliver(tx, await email_eml(tx, row), routes)


def _may_receive(address: str, receiving: dict[str, str]) -> bool:
    domain = address.rpartition("@")[2].strip(" >").rstrip(".").lower()
    return domain in receiving or domain.endswith(MANAGED_SUFFIX)


def install(emu: Emulator) -> None:
    emu.events.on_emit(_loopback)


# ---- serialising --------------------------------------------------------------------------------

def _attachment_meta(row: Row, with_size: bool = True) -> dict[str, Any]:
    meta = {"id": row["id"], "filename": row["filename"], "content_type": row["content_type"],
            "content_id": row["content_id"], "content_disposition": row["content_disposition"]}
    if with_size:
        meta["size"] = row["size"]
    return meta


def _summary(row: Row, attachments: list[Row], single: bool = False) -> dict[str, Any]:
    summary = {
        "id": row["id"], "to": json.loads(row["to_addrs"]), "from": row["from_addr"],
        "created_at": iso_z(from_db(row["created_at"])), "subject": row["subject"],
        "bcc": json.loads(row["bcc"]), "cc": json.loads(row["cc"]), "reply_to": json.loads(row["reply_to"]),
        "message_id": row["message_id"],
    }
    if single:  # `received_for` only on the single-email view: the docs' list example has none
        summary["received_for"] = json.loads(row["received_for"])
    summary["attachments"] = [_attachment_meta(a) for a in attachments]
    return summary


def event_data(row: Row, attachments: list[Row]) -> dict[str, Any]:
    """EmailReceivedEventData (webhooks.md §6.3): metadata only, never content."""
    return {
        "email_id": row["id"], "created_at": iso_z(from_db(row["created_at"])), "from": row["from_addr"],
        "to": json.loads(row["to_addrs"]), "bcc": json.loads(row["bcc"]), "cc": json.loads(row["cc"]),
        "received_for": json.loads(row["received_for"]), "message_id": row["message_id"],
        "subject": row["subject"] or "",
        "attachments": [_attachment_meta(a, with_size=False) for a in attachments],
    }


def _secret(emu: Host) -> bytes:
    return hashlib.sha256(f"resend-emulator:{emu.settings.seed}:files".encode()).digest()


def signature(emu: Host, path: str, expires: int) -> str:
    return hmac.new(_secret(emu), f"{path}:{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def signed_url(tx: Tx, base_url: str, path: str) -> tuple[str, str]:
    """An absolute download URL valid for one hour on the emulator clock, and its `expires_at`."""
    expires_at = tx.now + URL_LIFETIME
    expires = int(expires_at.timestamp())
    url = f"{base_url}{path}?expires={expires}&signature={signature(tx.emu, path, expires)}"
    return url, iso_z(expires_at)


def raw_path(email_id: str) -> str:
    return f"{FILES_PREFIX}/{email_id}/raw"


def attachment_path(email_id: str, attachment_id: str) -> str:
    return f"{FILES_PREFIX}/{email_id}/attachments/{attachment_id}"


def _inline_data_uris(html: str, attachments: list[Row]) -> str:
    for attachment in attachments:
        if attachment["content_id"]:
            data = base64.b64encode(attachment["content"]).decode()
            uri = f"data:{attachment['content_type']};base64,{data}"
            pattern = re.compile(r"cid:" + re.escape(attachment["content_id"]) + r"(?=[\"'\s)>])")
            # A function replacement: the data URI must not be read as a regex template.
            html = pattern.sub(lambda _match: uri, html)  # noqa: B023 - used before the next iteration
    return html


def serialize(tx: Tx, row: Row, attachments: list[Row], base_url: str, html_format: str) -> dict[str, Any]:
    html = row["html"]
    if html is not None and html_format == "data_uri":
        html = _inline_data_uris(html, attachments)
    url, expires_at = signed_url(tx, base_url, raw_path(row["id"]))
    body = {"object": "email", **_summary(row, attachments, single=True)}
    body.update({
        "html": html, "html_format": html_format, "text": row["text"], "headers": json.loads(row["headers"]),
        "authentication": json.loads(row["authentication"]),
        "raw": {"download_url": url, "expires_at": expires_at},
    })
    return body


def serialize_attachment(tx: Tx, row: Row, base_url: str, with_object: bool) -> dict[str, Any]:
    url, expires_at = signed_url(tx, base_url, attachment_path(row["email_id"], row["id"]))
    body: dict[str, Any] = {"object": "attachment"} if with_object else {}
    body.update({"id": row["id"], "filename": row["filename"], "size": row["size"],
                 "content_type": row["content_type"], "content_disposition": row["content_disposition"],
                 "content_id": row["content_id"], "download_url": url, "expires_at": expires_at})
    return body


# ---- services -----------------------------------------------------------------------------------

def _uuid(value: str, name: str) -> str:
    if not UUID.match(value):
        raise ApiError(errors.INVALID_PARAMETER, f"The `{name}` must be a valid UUID.")
    return value


async def _attachment_rows(tx: Tx, email_id: str) -> list[Row]:
    return await tx.all("SELECT * FROM received_attachments WHERE email_id = ? AND account = ?"
                        " ORDER BY seq", (email_id, tx.account))


async def email_row(tx: Tx, email_id: str) -> Row:
    row = await tx.one("SELECT * FROM received_emails WHERE id = ? AND account = ?",
                       (_uuid(email_id, "email_id"), tx.account))
    if row is None:
        raise not_found("Email")
    return row


async def list_received(tx: Tx, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=True, uuid_cursors=True)
    columns = ("seq, id, account, from_addr, to_addrs, cc, bcc, reply_to, received_for, subject,"
               " message_id, created_at")
    rows, has_more = await fetch_page(tx, "received_emails", page, columns=columns)
    items = [_summary(row, await _attachment_rows(tx, row["id"])) for row in rows]
    return list_body(items, has_more)


async def get_received(tx: Tx, email_id: str, base_url: str, html_format: str | None) -> dict[str, Any]:
    chosen = html_format or "data_uri"
    if chosen not in HTML_FORMATS:
        raise invalid("Invalid `html_format` parameter. Must be one of: `data_uri`, `cid`.")
    row = await email_row(tx, email_id)
    return serialize(tx, row, await _attachment_rows(tx, row["id"]), base_url, chosen)


async def list_attachments(tx: Tx, email_id: str, query: Any, base_url: str) -> dict[str, Any]:
    page = parse_page(query, optional_limit=True, uuid_cursors=True)
    await email_row(tx, email_id)
    rows, has_more = await fetch_page(tx, "received_attachments", page, "account = ? AND email_id = ?",
                                      [tx.account, email_id])
    return list_body([serialize_attachment(tx, row, base_url, False) for row in rows], has_more)


async def get_attachment(tx: Tx, email_id: str, attachment_id: str, base_url: str) -> dict[str, Any]:
    await email_row(tx, email_id)
    row = await tx.one("SELECT * FROM received_attachments WHERE id = ? AND email_id = ? AND account = ?",
                       (_uuid(attachment_id, "attachment_id"), email_id, tx.account))
    if row is None:
        raise not_found("Attachment")
    return serialize_attachment(tx, row, base_url, True)


# ---- HTTP ---------------------------------------------------------------------------------------

def _base_url(req: ApiRequest) -> str:
    return str(req.raw.base_url).rstrip("/")


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_received(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_received(tx, req.params["email_id"], _base_url(req), req.query.get("html_format"))


async def http_list_attachments(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_attachments(tx, req.params["email_id"], req.query, _base_url(req))


async def http_get_attachment(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_attachment(tx, req.params["email_id"], req.params["attachment_id"], _base_url(req))


OPS = [
    Op("emails/list-receiving", "GET", "/emails/receiving", http_list),
    Op("emails/get-receiving", "GET", "/emails/receiving/{email_id}", http_get),
    Op("emails/list-receiving-attachments", "GET", "/emails/receiving/{email_id}/attachments",
       http_list_attachments),
    Op("emails/get-receiving-attachment", "GET", "/emails/receiving/{email_id}/attachments/{attachment_id}",
       http_get_attachment),
]
