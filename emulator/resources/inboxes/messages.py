"""Thread emails: list and get, reply and forward (reference/inboxes.md §3.8–3.9).

Everything an inbox sends goes through the emails group's `send_email`, so it is a real queued email
in the outbox with its `email.*` events, and then joins its thread as an outbound message whose id is
that email's id.
"""

from __future__ import annotations

import base64
import html as html_lib
import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest
from emulator.core import validate
from emulator.core.addresses import MAX_RECIPIENTS, address_of, addresses
from emulator.core.errors import invalid
from emulator.core.pages import INBOX_DOCS, list_body, parse_page
from emulator.resources.emails.service import send_email
from emulator.resources.inboxes.events import email_event
from emulator.resources.inboxes.filing import add_message, open_thread, touch
from emulator.resources.inboxes.store import (
    loads,
    message_body,
    require_inbox,
    require_message,
    require_thread,
    seek,
    ts,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from emulator.api.auth import Credential
    from emulator.core.db import Row, Tx

    OnSent = Callable[[Row, str], Awaitable[None]]

RESERVED_HEADERS = ("in-reply-to", "references", "reply-to")
MAX_SUBJECT = 2000
BANNER = "---------- Forwarded message ---------"


def sender_of(inbox: Row) -> str:
    address: str = inbox["email_address"]
    return f"{inbox['from_name']} <{address}>" if inbox["from_name"] else address


def custom_headers(body: dict[str, Any]) -> dict[str, str]:
    """[sdk] In-Reply-To, References and Reply-To are Resend's to set: naming one is a 422."""
    headers = validate.obj(body, "headers") or {}
    for name in headers:
        if name.lower() in RESERVED_HEADERS:
            raise invalid(f"Invalid `headers` field. The `{name}` header is set by Resend and cannot be"
                          " overridden.")
    return dict(headers)


def subject_of(body: dict[str, Any], default: str | None, prefix: str) -> str:
    value = validate.string(body, "subject", max_len=MAX_SUBJECT)
    if value is not None and ("\r" in value or "\n" in value):
        raise invalid("The `subject` field must not contain line breaks.")
    if value is not None:
        return value
    base = default or ""
    return base if base.lower().startswith(prefix.lower()) else f"{prefix} {base}".rstrip()


def check_total(*groups: list[str]) -> None:
    total = sum(len(group) for group in groups)
    if total > MAX_RECIPIENTS:
        raise invalid(f"Too many recipients. The maximum is {MAX_RECIPIENTS}, but received {total}.")


async def send_outbound(tx: Tx, inbox: Row, credential: Credential | None, thread: Row | None,
                        email: dict[str, Any], source: str, on_sent: OnSent | None = None) -> tuple[Row, Row]:
    """Send `email` (a `POST /emails` body without `from`) from the inbox; file it in `thread`, or
    in a new thread in the Sent folder. `on_sent(thread, email_id)` runs before the message joins the
    thread (a sent draft's event comes first). Returns (thread, message)."""
    sent = await send_email(tx, {"from": sender_of(inbox), **email}, credential, source="inbox")
    stored = await tx.one("SELECT message_id FROM emails WHERE id = ?", (sent["id"],))
    assert stored is not None
    if thread is None:
        thread = await open_thread(tx, inbox["id"], email["subject"], "sent")
    else:
        thread = await touch(tx, thread, thread["folder"])
    if on_sent is not None:
        await on_sent(thread, sent["id"])
    files = await tx.all("SELECT id, filename, size FROM email_attachments WHERE email_id = ? ORDER BY seq",
                         (sent["id"],))
    message = await add_message(tx, thread, {
        "id": sent["id"], "direction": "outbound", "from_addr": sender_of(inbox),
        "to_addrs": json.dumps(email["to"]), "cc": json.dumps(email.get("cc") or []),
        "bcc": json.dumps(email.get("bcc") or []), "reply_to": "[]", "subject": email["subject"],
        "message_id": None, "header_id": stored["message_id"], "header_to": json.dumps(email["to"]),
        "source_id": sent["id"], "html": email.get("html"), "text": email.get("text"),
        "attachments": json.dumps([dict(row) for row in files]), "read": 1, "received_at": tx.now_db})
    await email_event(tx, "inbox.email.sent", thread, message, source)
    return thread, message


def reply_recipients(inbox: Row, original: Row) -> list[str]:
    """[docs] to the replied message's Reply-To, else its sender; for a sent message, its `to`."""
    if original["direction"] == "outbound":
        return list(loads(original["to_addrs"]))
    return list(loads(original["reply_to"])) or [original["from_addr"]]


def reply_all_cc(inbox: Row, original: Row, to: list[str]) -> list[str]:
    """[sdk] A received message's other To addresses and its cc; a sent message's cc. The inbox and the
    new `to` are left out, and duplicates."""
    skip = {address_of(a).lower() for a in to} | {inbox["email_address"]}
    copied: list[str] = []
    others = loads(original["header_to"]) if original["direction"] == "inbound" else []
    for address in [*others, *loads(original["cc"])]:
        if address_of(address).lower() not in skip:
            skip.add(address_of(address).lower())
            copied.append(address)
    return copied


def threading_headers(original: Row, older: list[Row]) -> dict[str, str]:
    if not original["header_id"]:
        return {}
    ids = [row["header_id"] for row in older if row["header_id"]]
    return {"In-Reply-To": original["header_id"], "References": " ".join(ids)}


def _content(body: dict[str, Any]) -> tuple[str | None, str | None]:
    html, text = validate.string(body, "html"), validate.string(body, "text")
    return html, text


async def history(tx: Tx, original: Row) -> list[Row]:
    """The Message-IDs of the thread up to `original`, oldest first (its References)."""
    return await tx.all("SELECT header_id FROM inbox_messages WHERE thread_id = ? AND seq <= ? ORDER BY seq",
                        (original["thread_id"], original["seq"]))


def _response(message: Row) -> dict[str, Any]:
    body = message_body(message)
    return {"id": body["id"], "email_id": body["id"], **{k: v for k, v in body.items() if k != "id"}}


async def reply(tx: Tx, inbox_id: str, thread_id: str, email_id: str, body: dict[str, Any],
                credential: Credential | None, source: str = "api") -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    thread = await require_thread(tx, inbox, thread_id)
    original = await require_message(tx, thread, email_id)
    html, text = _content(body)
    if not (html or "").strip() and not (text or "").strip():
        raise invalid("Provide at least one of `html` or `text`.")
    to = reply_recipients(inbox, original)
    cc = addresses(body, "cc") or []
    if validate.boolean(body, "reply_all"):
        cc = [*reply_all_cc(inbox, original, to), *[a for a in cc if a not in to]]
    bcc = addresses(body, "bcc") or []
    check_total(to, cc, bcc)
    email = {"to": to, "cc": cc, "bcc": bcc, "subject": subject_of(body, thread["subject"], "Re:"),
             "html": html, "text": text,
             "headers": {**custom_headers(body), **threading_headers(original, await history(tx, original))}}
    if body.get("attachments") is not None:
        email["attachments"] = body["attachments"]
    _, message = await send_outbound(tx, inbox, credential, thread, email, source)
    return _response(message)


def quoted(original: Row, note_html: str | None, note_text: str | None) -> tuple[str, str]:
    """The note above the original under the forwarded-message banner [docs]."""
    lines = [BANNER, f"From: {original['from_addr']}", f"Date: {ts(original['received_at'])}",
             f"Subject: {original['subject'] or ''}", f"To: {', '.join(loads(original['to_addrs']))}"]
    original_text = original["text"] or ""
    text = "\n".join([*([note_text, ""] if note_text else []), *lines, "", original_text])
    head = "<br>".join(html_lib.escape(line) for line in lines)
    original_html = original["html"] or f"<pre>{html_lib.escape(original_text)}</pre>"
    html = f"{note_html or ''}<div>{head}<br><br>{original_html}</div>"
    return html, text


async def forward(tx: Tx, inbox_id: str, thread_id: str, email_id: str, body: dict[str, Any],
                  credential: Credential | None, source: str = "api") -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    thread = await require_thread(tx, inbox, thread_id)
    original = await require_message(tx, thread, email_id)
    to = addresses(body, "to", required=True) or []
    cc, bcc = addresses(body, "cc") or [], addresses(body, "bcc") or []
    check_total(to, cc, bcc)
    note_html, note_text = _content(body)
    html, text = quoted(original, note_html, note_text)
    email = {"to": to, "cc": cc, "bcc": bcc, "subject": subject_of(body, thread["subject"], "Fwd:"),
             "html": html, "text": text, "headers": custom_headers(body)}
    added = body.get("attachments") or []
    if not isinstance(added, list):
        raise invalid("The `attachments` field must be an array.")
    files = [*await original_files(tx, original), *added]
    if files:
        email["attachments"] = files
    _, message = await send_outbound(tx, inbox, credential, thread, email, source)
    return _response(message)


async def original_files(tx: Tx, original: Row) -> list[dict[str, Any]]:
    """[sdk] A forward carries the original's files: a received email's from Receiving's table, a sent
    one's from the emails group's (read as stored; the emulator fetched nothing for `path` files)."""
    if original["direction"] == "inbound":
        sql = ("SELECT filename, content_type, content_id, content FROM received_attachments"
               " WHERE email_id = ? ORDER BY seq")
    else:
        sql = ("SELECT filename, content_type, content_id, content FROM email_attachments"
               " WHERE email_id = ? ORDER BY seq")
    rows = await tx.all(sql.replace("WHERE", "WHERE account = ? AND"), (tx.account, original["source_id"]))
    return [{"filename": row["filename"], "content_type": row["content_type"],
             "content": base64.b64encode(row["content"]).decode(),
             **({"content_id": row["content_id"].strip("<>")} if row["content_id"] else {})} for row in rows]


async def list_emails(tx: Tx, inbox_id: str, thread_id: str, query: Any) -> dict[str, Any]:
    """Oldest first: `after` → the next, newer page; `before` → the older one [docs]."""
    page = parse_page(query, optional_limit=False, uuid_cursors=True, docs=INBOX_DOCS)
    thread = await require_thread(tx, await require_inbox(tx, inbox_id), thread_id)
    rows, has_more = await seek(tx, "inbox_messages", page, "thread_id = ?", [thread["id"]], order="seq",
                                oldest_first=True)
    return list_body([message_body(row) for row in rows], has_more)


async def get_email(tx: Tx, inbox_id: str, thread_id: str, email_id: str) -> dict[str, Any]:
    thread = await require_thread(tx, await require_inbox(tx, inbox_id), thread_id)
    return message_body(await require_message(tx, thread, email_id))


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_emails(tx, req.params["inbox_id"], req.params["thread_id"], req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_email(tx, req.params["inbox_id"], req.params["thread_id"], req.params["email_id"])


async def http_reply(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    p = req.params
    return await reply(tx, p["inbox_id"], p["thread_id"], p["email_id"], req.json_object(), req.credential)


async def http_forward(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    p = req.params
    return await forward(tx, p["inbox_id"], p["thread_id"], p["email_id"], req.json_object(), req.credential)
