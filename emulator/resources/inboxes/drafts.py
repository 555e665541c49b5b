"""Drafts: create (standalone or reply), list, get, update, delete, send (reference §3.10; seed §2.9,
§3, §4.3).

The list holds unsent drafts only, most recently saved first; `after` walks to older pages, `before`
back to newer ones. Sending sets `email_id` to the queued outbound email and the draft leaves the list.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Reply
from emulator.core import errors, validate
from emulator.core.addresses import addresses
from emulator.core.errors import ApiError, invalid
from emulator.core.pages import INBOX_DOCS, list_body, parse_page
from emulator.mime.message import html_to_text
from emulator.resources.emails import parse_attachments
from emulator.resources.inboxes.events import draft_event
from emulator.resources.inboxes.messages import (
    MAX_SUBJECT,
    check_total,
    custom_headers,
    history,
    send_outbound,
    threading_headers,
)
from emulator.resources.inboxes.store import (
    draft_meta,
    loads,
    next_tick,
    require_draft,
    require_inbox,
    require_message,
    require_thread,
    seek,
    ts,
)

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.core.db import Row, Tx

CONTENT_FIELDS = ("to", "cc", "bcc", "subject", "html", "text")
SNIPPET_CHARS = 200  # [recommendation] the preview length is undocumented
ALREADY_SENT = "This draft has already been sent."


def _subject(body: dict[str, Any]) -> str | None:
    value = validate.string(body, "subject", max_len=MAX_SUBJECT)
    if value is not None and (not value.strip() or "\r" in value or "\n" in value):
        raise invalid("The `subject` field must not be blank or contain line breaks.")
    return value


def _fields(body: dict[str, Any]) -> dict[str, Any]:
    """The content fields present in `body`, as columns (`to` null stays null; cc/bcc null → [])."""
    columns: dict[str, Any] = {}
    if "to" in body:
        to = addresses(body, "to")
        columns["to_addrs"] = json.dumps(to) if to is not None else None
    for name in ("cc", "bcc"):
        if name in body:
            columns[name] = json.dumps(addresses(body, name) or [])
    if "subject" in body:
        columns["subject"] = _subject(body)
    for name in ("html", "text"):
        if name in body:
            columns[name] = validate.string(body, name)
    return columns


def _check_content(row: Row, files: int) -> None:
    to, cc, bcc = loads(row["to_addrs"]) or [], loads(row["cc"]), loads(row["bcc"])
    text_fields = any((row[name] or "").strip() for name in ("subject", "html", "text"))
    if not (to or cc or bcc or text_fields or files):
        raise invalid("A draft needs at least one of `to`, `cc`, `bcc`, `subject`, `text`, `html` or"
                      " `attachments`.")
    check_total(to, cc, bcc)


def snippet(row: Row) -> str | None:
    source = row["text"] or (html_to_text(row["html"]) if row["html"] else "")
    flat = re.sub(r"\s+", " ", source).strip()
    return flat[:SNIPPET_CHARS] or None


async def draft_files(tx: Tx, draft_id: str) -> list[Row]:
    return await tx.all("SELECT * FROM inbox_draft_files WHERE draft_id = ? ORDER BY seq", (draft_id,))


def _file_meta(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "filename": row["filename"], "content_type": row["content_type"],
            "size": row["size"]}


async def _store_files(tx: Tx, draft_id: str, body: dict[str, Any]) -> int:
    """`attachments` replaces every file on the draft (checked as a send's attachments are)."""
    files = parse_attachments(body, in_batch=False)
    await tx.run("DELETE FROM inbox_draft_files WHERE draft_id = ?", (draft_id,))
    for file in files:
        await tx.insert("inbox_draft_files", {
            "id": tx.new_id(), "draft_id": draft_id, "filename": file.filename,
            "content_type": file.content_type, "content_id": file.content_id, "path": file.path,
            "size": len(file.content), "content": file.content})
    return len(files)


async def draft_body(tx: Tx, row: Row) -> dict[str, Any]:
    """The single draft: html/text/email_id/created_at appear only here [seed §2.9]."""
    meta = draft_meta(row)
    body = {key: meta[key] for key in ("object", "id", "type", "to", "cc", "bcc", "subject")}
    body.update({"html": row["html"], "text": row["text"]})
    body.update({key: meta[key] for key in ("thread_id", "reply_to_email_id", "email_id", "created_at",
                                            "updated_at")})
    body["attachments"] = [_file_meta(file) for file in await draft_files(tx, row["id"])]
    return body


async def draft_item(tx: Tx, row: Row) -> dict[str, Any]:
    """A list item: `snippet` instead of the bodies, no email_id/created_at [seed §2.9]."""
    return {"id": row["id"], "type": row["type"], "to": loads(row["to_addrs"]), "cc": loads(row["cc"]),
            "bcc": loads(row["bcc"]), "subject": row["subject"], "snippet": snippet(row),
            "thread_id": row["thread_id"], "reply_to_email_id": row["reply_to_email_id"],
            "updated_at": ts(row["updated_at"]),
            "attachments": [_file_meta(file) for file in await draft_files(tx, row["id"])]}


async def _reply_target(tx: Tx, inbox: Row, body: dict[str, Any]) -> tuple[Row | None, Row | None]:
    thread_id, email_id = body.get("thread_id"), body.get("reply_to_email_id")
    if (thread_id is None) != (email_id is None):
        raise invalid("`thread_id` and `reply_to_email_id` must be sent together.")
    if thread_id is None:
        return None, None
    if not isinstance(thread_id, str) or not isinstance(email_id, str):
        raise invalid("`thread_id` and `reply_to_email_id` must be strings.")
    thread = await require_thread(tx, inbox, thread_id)
    return thread, await require_message(tx, thread, email_id)


async def create_draft(tx: Tx, inbox_id: str, body: dict[str, Any], source: str = "api") -> Reply:
    inbox = await require_inbox(tx, inbox_id)
    thread, original = await _reply_target(tx, inbox, body)
    if original is not None:
        existing = await tx.one("SELECT * FROM inbox_drafts WHERE reply_to_email_id = ? AND inbox_id = ?"
                                " AND email_id IS NULL", (original["id"], inbox["id"]))
        if existing is not None:  # one unsent reply draft per email: 200 with the existing one [docs]
            if "attachments" in body:  # [sdk] the one field such a request still applies
                await _store_files(tx, existing["id"], body)
            return Reply(await draft_body(tx, existing), 200)
    row: Row = {"id": tx.new_id(), "account": tx.account, "inbox_id": inbox["id"],
                "type": "reply" if thread else "standalone", "to_addrs": None, "cc": "[]", "bcc": "[]",
                "subject": None, "html": None, "text": None, "thread_id": thread and thread["id"],
                "reply_to_email_id": original and original["id"], "email_id": None,
                "tick": await next_tick(tx, "inbox_drafts", inbox["id"]), "created_at": tx.now_db,
                "updated_at": tx.now_db}
    row.update(_fields(body))
    await tx.insert("inbox_drafts", row)
    _check_content(row, await _store_files(tx, row["id"], body))
    await draft_event(tx, "inbox.draft.created", row, source, thread)
    return Reply(await draft_body(tx, row), 201)


async def list_drafts(tx: Tx, inbox_id: str, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=False, uuid_cursors=True, docs=INBOX_DOCS)
    inbox = await require_inbox(tx, inbox_id)
    rows, has_more = await seek(tx, "inbox_drafts", page, "inbox_id = ? AND email_id IS NULL", [inbox["id"]])
    return list_body([await draft_item(tx, row) for row in rows], has_more)


async def get_draft(tx: Tx, inbox_id: str, draft_id: str) -> dict[str, Any]:
    return await draft_body(tx, await require_draft(tx, await require_inbox(tx, inbox_id), draft_id))


async def _unsent(tx: Tx, inbox_id: str, draft_id: str) -> tuple[Row, Row]:
    inbox = await require_inbox(tx, inbox_id)
    draft = await require_draft(tx, inbox, draft_id)
    if draft["email_id"] is not None:
        raise ApiError(errors.CONFLICT, ALREADY_SENT)
    return inbox, draft


async def _thread_of(tx: Tx, draft: Row) -> Row | None:
    if draft["thread_id"] is None:
        return None
    return await tx.one("SELECT * FROM inbox_threads WHERE id = ?", (draft["thread_id"],))


async def update_draft(tx: Tx, inbox_id: str, draft_id: str, body: dict[str, Any],
                       source: str = "api") -> dict[str, Any]:
    inbox, draft = await _unsent(tx, inbox_id, draft_id)
    if not any(name in body for name in (*CONTENT_FIELDS, "attachments")):
        raise invalid("Provide at least one of `to`, `cc`, `bcc`, `subject`, `text`, `html` or"
                      " `attachments`.")
    changes = _fields(body)
    changes.update({"tick": await next_tick(tx, "inbox_drafts", inbox["id"]), "updated_at": tx.now_db})
    merged = {**draft, **changes}
    files = await _store_files(tx, draft["id"], body) if "attachments" in body else \
        len(await draft_files(tx, draft["id"]))
    _check_content(merged, files)
    await tx.update("inbox_drafts", draft["id"], changes)
    await draft_event(tx, "inbox.draft.updated", merged, source, await _thread_of(tx, merged))
    return await draft_body(tx, merged)


async def delete_draft(tx: Tx, inbox_id: str, draft_id: str, source: str = "api") -> dict[str, Any]:
    _, draft = await _unsent(tx, inbox_id, draft_id)
    await tx.run("DELETE FROM inbox_draft_files WHERE draft_id = ?", (draft["id"],))
    await tx.run("DELETE FROM inbox_drafts WHERE id = ?", (draft["id"],))
    await draft_event(tx, "inbox.draft.deleted", draft, source, await _thread_of(tx, draft))
    return {"object": "inbox_draft", "id": draft["id"], "deleted": True}


def _send_file(row: Row) -> dict[str, Any]:
    file: dict[str, Any] = {"filename": row["filename"], "content_type": row["content_type"]}
    if row["path"] and not row["content"]:
        file["path"] = row["path"]
    else:
        file["content"] = base64.b64encode(row["content"]).decode()
    if row["content_id"]:
        file["content_id"] = row["content_id"]
    return file


def _ready(draft: Row) -> None:
    if not loads(draft["to_addrs"]):
        raise invalid("A draft needs at least one `to` recipient to be sent.")
    if not (draft["subject"] or "").strip():
        raise invalid("A draft needs a `subject` to be sent.")
    if not (draft["html"] or "").strip() and not (draft["text"] or "").strip():
        raise invalid("A draft needs `html` or `text` to be sent.")


async def send_draft(tx: Tx, inbox_id: str, draft_id: str, body: dict[str, Any],
                     credential: Credential | None, source: str = "api") -> dict[str, Any]:
    """Seed §3: `email_id` becomes the queued outbound email's id; `inbox.draft.sent` precedes
    `inbox.email.sent`. A second send is a 409 [docs]."""
    inbox, draft = await _unsent(tx, inbox_id, draft_id)
    _ready(draft)
    thread = await _thread_of(tx, draft)
    headers = custom_headers(body)
    if draft["reply_to_email_id"] is not None and thread is not None:
        original = await require_message(tx, thread, draft["reply_to_email_id"])
        headers.update(threading_headers(original, await history(tx, original)))
    email = {"to": loads(draft["to_addrs"]), "cc": loads(draft["cc"]), "bcc": loads(draft["bcc"]),
             "subject": draft["subject"], "html": draft["html"], "text": draft["text"], "headers": headers}
    files = await draft_files(tx, draft["id"])
    if files:
        email["attachments"] = [_send_file(file) for file in files]
    sent_draft: dict[str, Any] = {}

    async def mark_sent(filed_in: Row, email_id: str) -> None:
        changes = {"email_id": email_id, "thread_id": filed_in["id"], "updated_at": tx.now_db}
        await tx.update("inbox_drafts", draft["id"], changes)
        sent_draft.update({**draft, **changes})
        await draft_event(tx, "inbox.draft.sent", sent_draft, source, filed_in)

    filed_in, message = await send_outbound(tx, inbox, credential, thread, email, source, on_sent=mark_sent)
    return {"object": "inbox_draft", "id": draft["id"], "thread_id": filed_in["id"],
            "email_id": message["id"]}


async def http_create(tx: Tx, req: ApiRequest) -> Reply:
    return await create_draft(tx, req.params["inbox_id"], req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_drafts(tx, req.params["inbox_id"], req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_draft(tx, req.params["inbox_id"], req.params["draft_id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_draft(tx, req.params["inbox_id"], req.params["draft_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_draft(tx, req.params["inbox_id"], req.params["draft_id"])


async def http_send(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await send_draft(tx, req.params["inbox_id"], req.params["draft_id"], req.json_object(),
                            req.credential)
