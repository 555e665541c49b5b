"""Sent emails: send, batch, list, get, reschedule, cancel (reference/emails.md §1–§6).

Field checks live in `fields.py`, `scheduled_at` in `schedule.py`, the delivery state machine in
`outcomes.py`; share and attachments in `attachments.py`, metrics in `metrics.py`. For other parts:
`send_email(tx, body, credential, source=...)` (SMTP), `serialize_email(row)`, `email_eml(tx, row)`
(the stored `.eml`, rendered on first use) and the tables below (outbox, UI).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import errors, metrics
from emulator.core.addresses import address_of, addresses, domain_of, sender
from emulator.core.clock import from_db, pg_timestamp, to_db
from emulator.core.errors import ApiError, invalid, missing_field, not_found
from emulator.core.events import emit, notify
from emulator.core.jobs import schedule
from emulator.core.jsontext import compact
from emulator.core.pages import UUID, fetch_page, list_body, parse_page
from emulator.mime.message import MimeAttachment, OutgoingMessage, html_to_text, render_message
from emulator.resources.domains.service import verified_domain
from emulator.resources.emails import fields, outcomes, quota, tracking
from emulator.resources.emails.fields import EmailDraft
from emulator.resources.emails.schedule import parse_scheduled_at, requested_schedule
from emulator.resources.templates.service import resolve_template

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.core.db import Row, Tx

TABLES = [
    # JSON columns: to_addrs (list), cc/bcc/reply_to (list or NULL when never given), headers (object or
    # NULL), tags (list of {name, value} or NULL). `text_auto` = 1: `text` is still to be generated from
    # `html` (see `email_text`); `text` NULL with `text_auto` = 0 beside an HTML body is the sender's
    # opt-out. `eml` is the RFC 5322 message, rendered on first use and kept (see `email_eml`). Both are
    # deferred because they cost more than the whole rest of a send.
    """CREATE TABLE IF NOT EXISTS emails (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        key_id TEXT,
        source TEXT NOT NULL,
        from_addr TEXT NOT NULL,
        to_addrs TEXT NOT NULL,
        cc TEXT,
        bcc TEXT,
        reply_to TEXT,
        subject TEXT NOT NULL,
        html TEXT,
        text TEXT,
        text_auto INTEGER NOT NULL DEFAULT 0,
        headers TEXT,
        tags TEXT,
        scheduled_at TEXT,
        last_event TEXT NOT NULL,
        template_id TEXT,
        topic_id TEXT,
        broadcast_id TEXT,
        message_id TEXT NOT NULL,
        eml BLOB,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS emails_account ON emails (account, seq)",
    # Behind a broadcast's delivery figures (broadcasts/store.py `delivery_counts`, the UI's broadcast
    # page): only broadcast emails are in it, so other sends pay nothing.
    "CREATE INDEX IF NOT EXISTS emails_by_broadcast ON emails (account, broadcast_id, last_event)"
    " WHERE broadcast_id IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS email_attachments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email_id TEXT NOT NULL,
        filename TEXT,
        content_type TEXT NOT NULL,
        content_id TEXT,
        disposition TEXT NOT NULL,
        size INTEGER NOT NULL,
        path TEXT,
        content BLOB NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS email_attachments_email ON email_attachments (email_id, seq)",
]
MAX_BATCH = 100
BATCH_MODES = ("strict", "permissive")
# [rec] recipients at reserved documentation domains are refused with --strict-domains only.
RESERVED_DOMAINS = frozenset({"example.com", "example.org", "example.net", "test.com"})


def _dumps(value: Any) -> str | None:
    return None if value is None else compact(value)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


# ---- serialisation -----------------------------------------------------------------------------

def list_item(row: Row) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": row["id"],
        "message_id": row["message_id"],
        "to": json.loads(row["to_addrs"]),
        "from": row["from_addr"],
        "created_at": pg_timestamp(from_db(row["created_at"])),
        "subject": row["subject"],
        "bcc": _loads(row["bcc"]),
        "cc": _loads(row["cc"]),
        "reply_to": _loads(row["reply_to"]),
        "last_event": row["last_event"],
        "scheduled_at": pg_timestamp(from_db(row["scheduled_at"])) if row["scheduled_at"] else None,
    }
    if row["topic_id"] is not None:
        item["topic_id"] = row["topic_id"]
    return item


def email_text(row: Row) -> str | None:
    """The text part: as sent, or generated from the HTML when the sender gave none."""
    if row["text_auto"] and row["html"] is not None:
        return html_to_text(row["html"])
    return row["text"]  # type: ignore[no-any-return]


def serialize_email(row: Row) -> dict[str, Any]:
    """GET /emails/{id}: the list fields plus `object`, `html`, `text` and `tags`."""
    item = list_item(row)
    body: dict[str, Any] = {"object": "email"}
    for key, value in item.items():
        body[key] = value
        if key == "subject":
            body["html"], body["text"] = row["html"], email_text(row)
    # [rec] `[]` rather than null when the email has no tags, so clients can always iterate.
    body["tags"] = _loads(row["tags"]) or []
    return body


# ---- parsing -----------------------------------------------------------------------------------

def parse_body(body: Any, now: Any, in_batch: bool) -> EmailDraft:
    """Every field check that needs no database, in the API's order."""
    if not isinstance(body, dict):
        raise invalid("The email must be a JSON object.")
    template = body.get("template")
    has_template = template is not None
    draft = EmailDraft(
        from_=sender(body, required=not has_template),
        to=addresses(body, "to", required=True) or [],
        subject=fields.subject(body, required=not has_template),
    )
    draft.cc = addresses(body, "cc")
    draft.bcc = addresses(body, "bcc")
    draft.reply_to = addresses(body, "reply_to")
    draft.html, draft.text = fields.content(body)
    draft.headers = fields.headers(body)
    draft.attachments = fields.attachments(body, in_batch)
    draft.tags = fields.tags(body)
    if (scheduled_at := requested_schedule(body)) is not None:
        draft.scheduled_at = parse_scheduled_at(scheduled_at, now)
    draft.topic_id = fields.topic_id(body)
    draft.template = template
    return draft


async def _apply_template(tx: Tx, draft: EmailDraft) -> str | None:
    """Merge the published template into `draft`; the sender's from/subject/reply_to win."""
    if draft.template is None:
        return None
    rendered = await resolve_template(tx, draft.template)
    draft.html, draft.text = rendered.html, rendered.text
    draft.from_ = draft.from_ or rendered.from_
    draft.subject = draft.subject if draft.subject is not None else rendered.subject
    draft.reply_to = draft.reply_to if draft.reply_to is not None else rendered.reply_to
    if draft.from_ is None:
        raise missing_field("from")
    if draft.subject is None:
        raise missing_field("subject")
    return rendered.template_id


async def check_sender(tx: Tx, draft: EmailDraft, credential: Credential | None) -> None:
    """Sender-domain rules (emails.md): a domain-restricted key always; the rest with --strict-domains."""
    assert draft.from_ is not None
    domain = domain_of(draft.from_)
    if credential is not None and credential.domain_id:
        row = await tx.one("SELECT name FROM domains WHERE id = ? AND account = ?",
                           (credential.domain_id, tx.account))
        if row is None or row["name"] != domain:
            allowed = row["name"] if row else "its"
            # [rec] 00-general §2.4: undocumented; 403 validation_error naming the allowed domain.
            raise ApiError(errors.FORBIDDEN, f"This API key is restricted to send emails from the"
                                             f" `{allowed}` domain only.")
    if not tx.emu.settings.strict_domains:
        return
    everyone = [*draft.to, *(draft.cc or []), *(draft.bcc or [])]
    if domain == outcomes.TEST_DOMAIN:
        if any(domain_of(a) != outcomes.TEST_DOMAIN for a in everyone):
            raise ApiError(errors.FORBIDDEN, TESTING_ONLY)
    elif not await _verified(tx, domain):
        raise ApiError(errors.FORBIDDEN,
                       f"The `{domain}` domain is not verified. Please, add and verify your domain.")
    for address in everyone:
        if domain_of(address) in RESERVED_DOMAINS:
            raise invalid(f"Invalid `to` field. `{address_of(address)}` uses a reserved"
                          " domain that cannot receive email.")


TESTING_ONLY = (
    "You can only send testing emails to your own email address (`delivered@resend.dev`). To send emails"
    " to other recipients, please verify a domain at resend.com/domains, and change the `from` address"
    " to an email using this domain."
)


async def _verified(tx: Tx, domain: str) -> bool:
    return await verified_domain(tx, domain) is not None


async def prepare(tx: Tx, body: Any, credential: Credential | None,
                  in_batch: bool) -> tuple[EmailDraft, str | None]:
    draft = parse_body(body, tx.now, in_batch)
    template_id = await _apply_template(tx, draft)
    await check_sender(tx, draft, credential)
    return draft, template_id


# ---- storing -----------------------------------------------------------------------------------

async def store(tx: Tx, draft: EmailDraft, template_id: str | None, credential: Credential | None,
                source: str, queued: bool, broadcast_id: str | None = None) -> str:
    """Insert the email and start its life: scheduled, queued (batch) or sent at once. Broadcasts
    store each of their emails through here (`source="broadcast"`, their `broadcast_id`) and count
    them towards the quota themselves, once per slice of a chunk."""
    assert draft.from_ is not None and draft.subject is not None
    # Automation steps run as background jobs with no caller to answer a 429: they count towards the
    # quota but are not refused.
    if source != "broadcast":
        await quota.spend(tx, len(draft.to) + len(draft.cc or ()) + len(draft.bcc or ()),
                          enforce=source != "automation")
    email_id, now_db = tx.new_id(), tx.now_db
    scheduled = draft.scheduled_at is not None and draft.scheduled_at > tx.now
    html = await tracking.tracked_html(tx, email_id, draft.from_, draft.html)
    row: Row = {
        "id": email_id, "account": tx.account, "key_id": credential.key_id if credential else None,
        "source": source, "from_addr": draft.from_, "to_addrs": _dumps(draft.to),
        "cc": _dumps(draft.cc), "bcc": _dumps(draft.bcc), "reply_to": _dumps(draft.reply_to),
        "subject": draft.subject, "html": html, "text": draft.text or None,
        "text_auto": int(draft.text is None and draft.html is not None),
        "headers": _dumps(draft.headers), "tags": _dumps(draft.tags),
        "scheduled_at": to_db(draft.scheduled_at) if draft.scheduled_at else None,
        "last_event": "scheduled" if scheduled else ("queued" if queued else "sent"),
        "template_id": template_id, "topic_id": draft.topic_id, "broadcast_id": broadcast_id,
        # `<id@sender-domain>`, as mime.message_id_for makes it (the address is already validated).
        "message_id": f"<{email_id}@{domain_of(draft.from_)}>", "eml": None, "created_at": now_db,
    }
    await tx.insert("emails", row)
    for attachment in draft.attachments:
        await tx.insert("email_attachments", {
            "id": tx.new_id(), "account": tx.account, "email_id": email_id,
            "filename": attachment.filename, "content_type": attachment.content_type,
            "content_id": attachment.content_id, "disposition": attachment.disposition,
            "size": len(attachment.content), "path": attachment.path, "content": attachment.content,
            "created_at": now_db,
        })
    parsed = {"to_addrs": draft.to, "cc": draft.cc, "bcc": draft.bcc, "tags": draft.tags,
              "headers": draft.headers}
    await _start(tx, row, scheduled, queued, parsed)
    metrics.count_on_commit(tx, metrics.of(tx.emu).emails, (source,))
    return email_id


async def spend_quota(tx: Tx, count: int, enforce: bool = True) -> None:
    """Count `count` emails towards the account's quota (received mail too); 429 past a set quota."""
    await quota.spend(tx, count, enforce)


async def check_quota(tx: Tx, count: int) -> None:
    """429 when `count` more emails would pass a set quota (a broadcast's audience, before it goes out)."""
    await quota.check(tx, count)


async def _start(tx: Tx, row: Row, scheduled: bool, queued: bool, parsed: dict[str, Any]) -> None:
    if scheduled:
        data = outcomes.event_data(row, created=tx.now_iso, parsed=parsed)
        await emit(tx, "email.scheduled", data, subject_id=row["id"])
        await schedule(tx, outcomes.SEND_JOB, from_db(row["scheduled_at"]), {"email_id": row["id"]})
    elif queued:
        await schedule(tx, outcomes.SEND_JOB, tx.now, {"email_id": row["id"]})
    else:
        data = outcomes.event_data(row, created=tx.now_iso, parsed=parsed)
        payload = outcomes.outcome_payload(row, data, parsed)
        await emit(tx, "email.sent", data, subject_id=row["id"], context={"recipients": payload["rcpt"]})
        await schedule(tx, outcomes.OUTCOME_JOB, tx.now + outcomes.DELIVERY_DELAY, payload)


async def send_email(tx: Tx, body: Any, credential: Credential | None, *,
                     source: str = "api") -> dict[str, Any]:
    """POST /emails, also the entry point for SMTP (`source="smtp"`)."""
    draft, template_id = await prepare(tx, body, credential, in_batch=False)
    if source == "smtp" and draft.scheduled_at is not None:
        raise invalid("Emails sent through SMTP cannot be scheduled.")  # [docs] schedule-email
    return {"id": await store(tx, draft, template_id, credential, source, queued=False)}


async def send_batch(tx: Tx, body: Any, credential: Credential | None, mode: str) -> dict[str, Any]:
    if not isinstance(body, list):
        raise invalid("The request body must be an array of emails.")
    if not body or len(body) > MAX_BATCH:
        raise invalid(f"The batch must contain between 1 and {MAX_BATCH} emails.")
    accepted: list[tuple[EmailDraft, str | None]] = []
    failures: list[dict[str, Any]] = []
    for index, item in enumerate(body):
        try:
            accepted.append(await prepare(tx, item, credential, in_batch=True))
        except ApiError as error:
            if mode == "strict":
                raise
            failures.append({"index": index, "message": error.message})
    data = [{"id": await store(tx, draft, template_id, credential, "api", queued=True)}
            for draft, template_id in accepted]
    return {"data": data, "errors": failures} if mode == "permissive" else {"data": data}


# ---- reading and changing ----------------------------------------------------------------------

def check_uuid(value: str, name: str = "id") -> str:
    if not UUID.match(value):
        raise ApiError(errors.INVALID_PARAMETER, f"The `{name}` must be a valid UUID.")
    return value


async def get_email_row(tx: Tx, email_id: str) -> Row:
    check_uuid(email_id)
    row = await tx.one("SELECT * FROM emails WHERE id = ? AND account = ?", (email_id, tx.account))
    if row is None:
        raise not_found("Email")
    return row


async def list_emails(tx: Tx, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=False)
    rows, has_more = await fetch_page(tx, "emails", page)
    return list_body([list_item(row) for row in rows], has_more)


def _must_be_scheduled(row: Row, action: str) -> None:
    if row["last_event"] == "canceled":
        raise invalid(f"This email has been canceled and cannot be {action}.")
    if row["last_event"] != "scheduled":
        raise invalid(f"Only scheduled emails can be {action}. This email is `{row['last_event']}`.")


async def reschedule(tx: Tx, email_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await get_email_row(tx, email_id)
    if body.get("scheduled_at") is None:
        raise missing_field("scheduled_at")
    when = parse_scheduled_at(body["scheduled_at"], tx.now)
    _must_be_scheduled(row, "rescheduled")
    await tx.update("emails", email_id, {"scheduled_at": to_db(when)})
    # The job at the old time finds a later `scheduled_at` and leaves the email to this one.
    await schedule(tx, outcomes.SEND_JOB, when, {"email_id": email_id})
    notify(tx, email_id)
    row["scheduled_at"] = to_db(when)
    return serialize_email(row)


async def cancel(tx: Tx, email_id: str) -> dict[str, Any]:
    row = await get_email_row(tx, email_id)
    _must_be_scheduled(row, "canceled")
    await tx.update("emails", email_id, {"last_event": "canceled"})
    notify(tx, email_id)
    row["last_event"] = "canceled"
    return serialize_email(row)


async def email_eml(tx: Tx, row: Row) -> bytes:
    """The email's RFC 5322 message; rendered once, on first use, then read from the row.

    Fills in a generated text part on the way (stored, and in `row`), so readers of `row["text"]`
    after this call see it."""
    if row["eml"] is not None:
        return bytes(row["eml"])
    if row["text_auto"]:
        row["text"], row["text_auto"] = email_text(row), 0
    parts = await tx.all("SELECT * FROM email_attachments WHERE email_id = ? AND account = ? ORDER BY seq",
                         (row["id"], tx.account))
    raw = render_message(OutgoingMessage(
        email_id=row["id"], from_=row["from_addr"], to=json.loads(row["to_addrs"]),
        cc=_loads(row["cc"]) or (), reply_to=_loads(row["reply_to"]) or (), subject=row["subject"],
        date=from_db(row["created_at"]), html=row["html"],
        # NULL text beside an HTML body is the sender's opt-out: render no text part.
        text=row["text"] if row["text"] is not None or row["html"] is None else "",
        headers=_loads(row["headers"]) or {}, message_id=row["message_id"],
        attachments=[MimeAttachment(bytes(p["content"]), p["filename"], p["content_type"], p["content_id"])
                     for p in parts],
    ))
    tx.queue("UPDATE emails SET eml = ?, text = ?, text_auto = 0 WHERE id = ? AND account = ?",
             (raw, row["text"], row["id"], tx.account))
    row["eml"] = raw
    return raw


# ---- HTTP --------------------------------------------------------------------------------------

async def http_send(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await send_email(tx, req.body, req.credential)


async def http_batch(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    mode = req.headers.get("x-batch-validation", "strict").strip().lower() or "strict"
    if mode not in BATCH_MODES:
        raise invalid("Invalid `x-batch-validation` header. Must be one of: `strict`, `permissive`.")
    return await send_batch(tx, req.body, req.credential, mode)


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_emails(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return serialize_email(await get_email_row(tx, req.params["email_id"]))


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await reschedule(tx, req.params["email_id"], req.json_object())


async def http_cancel(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await cancel(tx, req.params["email_id"])


OPS = [
    *(Op("emails/send", "POST", path, http_send, access="send", idempotent=True)
      for path in ("/emails", "/email", "/emails/sending", "/email/sending")),
    Op("emails/send-batch", "POST", "/emails/batch", http_batch, access="send", idempotent=True),
    Op("emails/list", "GET", "/emails", http_list),
    Op("emails/get", "GET", "/emails/{email_id}", http_get),
    Op("emails/update", "PATCH", "/emails/{email_id}", http_update),
    Op("emails/cancel", "POST", "/emails/{email_id}/cancel", http_cancel),
]
