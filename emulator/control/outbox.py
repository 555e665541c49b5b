"""The outbox as JSON under /_emulator/outbox: what the emulator "sent", for tests in any language.

    GET /_emulator/outbox                         list, newest first; filters below; `limit`/`after`/`before`
    GET /_emulator/outbox/wait?to=…&timeout=5     long-poll: the newest matching email, as soon as one exists
    GET /_emulator/outbox/count                   how many match the filters: exact, counted in windows
    GET /_emulator/outbox/{id}                    one email: text, html, headers, attachments, events
    GET /_emulator/outbox/{id}.eml                the RFC 5322 message (message/rfc822)
    GET /_emulator/outbox/{id}/attachments/{aid}  one attachment's bytes

Filters (all optional, combined with AND): `to` (a full address matches that recipient exactly among
to/cc/bcc; anything else is a case-insensitive substring of them), `from` and `subject` (substrings),
`tag` (`name` or `name:value`), `status` (the email's `last_event`), `source` (`api`/`smtp`/...),
`q` (a search like `from:billing@acme.dev has:attachment`, see search.py), `account` or `api_key` (one
account's emails; every account by default).

Built on the tables of emulator/resources/emails.py; the `.eml` comes from its `email_eml`.
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import TYPE_CHECKING, Any, NamedTuple

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.auth import account_label, selected_account
from emulator.api.ops import emulator_of, json_response
from emulator.control import windows
from emulator.control.base import PREFIX
from emulator.control.downloads import eml_response, file_response
from emulator.control.query import MAX_TERM_CHARS
from emulator.control.search import STATUSES as STATUSES  # re-exported: the last_event values
from emulator.control.search import index_new_mail, parse_search, tag_clause
from emulator.core import errors, substring
from emulator.core.clock import from_db, iso_z
from emulator.core.errors import ApiError, invalid, not_found
from emulator.core.pages import list_body, parse_page
from emulator.core.typed import decimal
from emulator.resources.emails.service import email_eml

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator
    from emulator.core.events import Event

BASE = f"{PREFIX}/outbox"
# Lists never read the bodies or the stored message.
LIST_COLUMNS = ("seq, id, account, source, from_addr, to_addrs, cc, bcc, reply_to, subject, tags,"
                " scheduled_at, last_event, template_id, topic_id, broadcast_id, message_id, created_at")
DEFAULT_WAIT_SECONDS = 10.0
STOPPING = ""  # put in a long poll's queue of changed ids when the emulator stops
MAX_WAIT_SECONDS = 300.0  # [rec] long enough for any test, short enough that a forgotten poll ends


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class OutboxFilter(NamedTuple):
    account: str | None = None
    to: str | None = None
    from_: str | None = None
    subject: str | None = None
    tag_name: str | None = None
    tag_value: str | None = None
    status: str | None = None
    source: str | None = None
    search: str | None = None  # the query language of emulator/control/search.py

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[tuple[str, list[Any]]] = []
        if self.account is not None:
            clauses.append(("account = ?", [self.account]))
        if self.to:
            clauses.append(self._recipient_clause(self.to))
        for column, value in (("from_addr", self.from_), ("subject", self.subject)):
            if value:  # linear in the field, where LIKE '%…%' can take the field's length times the term's
                clauses.append((substring.sql((column,)), [substring.needle(value)]))
        if self.tag_name:
            clauses.append(tag_clause(self.tag_name, self.tag_value))
        for column, value in (("last_event", self.status), ("source", self.source)):
            if value:
                clauses.append((f"{column} = ?", [value]))
        if self.search:
            clauses.append(parse_search(self.search).where())
        sql = " AND ".join(clause for clause, _ in clauses) or "1 = 1"
        return sql, [param for _, params in clauses for param in params]

    async def prepare(self, tx: Tx) -> None:
        """Before the filter's first statement: the search index's catch-up, and any scan off the loop."""
        if self.search:
            await index_new_mail(tx)
        elif self.from_ or self.subject:
            tx.scan_off_loop()

    @classmethod
    def _recipient_clause(cls, value: str) -> tuple[str, list[Any]]:
        patterns = cls._recipient_patterns(value)
        tests, params = [], []
        for column in ("to_addrs", "cc", "bcc"):
            for pattern in patterns:
                tests.append(f"{column} LIKE ? ESCAPE '\\'")
                params.append(pattern)
        return f"({' OR '.join(tests)})", params

    @staticmethod
    def _recipient_patterns(value: str) -> list[str]:
        value = value.strip()
        local, at, domain = value.partition("@")
        if local and at and domain:
            # Stored as JSON strings: `"a@b.dev"` or `"Name <a@b.dev>"`.
            return [f'%"{_like(value)}"%', f'%<{_like(value)}>"%']
        return [f"%{_like(value)}%"]


def _account_of(emu: Emulator, query: QueryParams) -> str | None:
    return selected_account(emu, query.get("account"), query.get("api_key"))


def _text_filter(query: QueryParams, name: str) -> str | None:
    value = query.get(name)
    if value is not None and len(value) > MAX_TERM_CHARS:
        raise invalid(f"`{name}` takes at most {MAX_TERM_CHARS} characters; this one has {len(value)}.")
    return value


def parse_filter(emu: Emulator, query: QueryParams) -> OutboxFilter:
    status = query.get("status")
    if status is not None and status not in STATUSES:
        raise invalid(f"Invalid `status` filter. Must be one of: {', '.join(STATUSES)}.")
    tag = query.get("tag")
    tag_name, tag_value = None, None
    if tag:
        name, sep, value = tag.partition(":")
        tag_name, tag_value = name, (value if sep else None)
    return OutboxFilter(
        account=_account_of(emu, query), to=_text_filter(query, "to"), from_=_text_filter(query, "from"),
        subject=_text_filter(query, "subject"), tag_name=tag_name, tag_value=tag_value, status=status,
        source=query.get("source"), search=query.get("q"),
    )


# ---- serialisation -----------------------------------------------------------------------------

def _json_or(text: str | None, default: Any) -> Any:
    return default if text is None else json.loads(text)


def summary(row: Row, label: str) -> dict[str, Any]:
    """`label`: how a person recognises the account (auth.account_label), never its key."""
    email_id = row["id"]
    return {
        "object": "outbox_email",
        "id": email_id,
        "account": row["account"],
        "account_label": label,
        "source": row["source"],
        "message_id": row["message_id"],
        "from": row["from_addr"],
        "to": json.loads(row["to_addrs"]),
        "cc": _json_or(row["cc"], []),
        "bcc": _json_or(row["bcc"], []),
        "reply_to": _json_or(row["reply_to"], []),
        "subject": row["subject"],
        "last_event": row["last_event"],
        "tags": _json_or(row["tags"], []),
        "template_id": row["template_id"],
        "topic_id": row["topic_id"],
        "broadcast_id": row["broadcast_id"],
        "created_at": iso_z(from_db(row["created_at"])),
        "scheduled_at": iso_z(from_db(row["scheduled_at"])) if row["scheduled_at"] else None,
        "url": f"{BASE}/{email_id}",
        "eml_url": f"{BASE}/{email_id}.eml",
    }


def _attachment(email_id: str, row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "filename": row["filename"],
        "content_type": row["content_type"],
        "content_disposition": row["disposition"],
        "content_id": row["content_id"],
        "size": row["size"],
        "download_url": f"{BASE}/{email_id}/attachments/{row['id']}",
    }


def _event(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "type": row["type"], "created_at": iso_z(from_db(row["created_at"])),
            "data": json.loads(row["data"])}


def _message_headers(raw: bytes) -> list[dict[str, str]]:
    from email import policy
    from email.parser import BytesHeaderParser

    # Only the header block goes to the parser (it would read the body, attachments and all, as the
    # payload it then ignores), split under compat32, which keeps each raw value exactly as
    # policy.default does but makes no header object on the way (default's parser builds one for
    # Content-Type as it closes); then each (name, raw value) is made a policy.default header once:
    # most recur from email to email (From, MIME-Version, ...). ~60% of a `wait_for` (issue 40).
    ends = [end for end in (raw.find(b"\r\n\r\n"), raw.find(b"\n\n")) if end >= 0]
    head = raw[:min(ends) + 2] if ends else raw
    parsed = BytesHeaderParser(policy=policy.compat32).parsebytes(head)
    return [{"name": name, "value": _header_value(name, value)} for name, value in parsed.raw_items()]


@functools.lru_cache(maxsize=4096)
def _header_value(name: str, value: str) -> str:
    """What `message.items()` gives under `email.policy.default`, as text (the same call it makes)."""
    from email import policy

    return str(policy.default.header_fetch_parse(name, value))


async def detail(tx: Tx, row: Row) -> dict[str, Any]:
    """Everything about one email; `tx` is scoped to the email's account."""
    parts = await tx.all(
        "SELECT id, filename, content_type, content_id, disposition, size FROM email_attachments"
        " WHERE email_id = ? AND account = ? ORDER BY seq", (row["id"], row["account"]))
    events = await tx.all("SELECT * FROM events WHERE account = ? AND subject_id = ? ORDER BY seq",
                          (row["account"], row["id"]))
    raw = await email_eml(tx, row)
    return {
        **summary(row, account_label(tx.emu, row["account"])),
        "html": row["html"],
        "text": row["text"],
        "headers": _json_or(row["headers"], {}),
        "message_headers": _message_headers(raw),
        "attachments": [_attachment(row["id"], part) for part in parts],
        "events": [_event(event) for event in events],
    }


# ---- queries -----------------------------------------------------------------------------------

async def _email_row(emu: Emulator, email_id: str, account: str | None) -> Row:
    async with emu.transaction() as tx:
        row = await tx.one("SELECT * FROM emails WHERE id = ?", (email_id,))
    if row is None or (account is not None and row["account"] != account):
        raise not_found("Email")
    return row


async def requested_email(request: Request) -> Row:
    """The email a `/_emulator/outbox/{email_id}…` route names (404 outside `account`/`api_key`)."""
    emu = emulator_of(request)
    return await _email_row(emu, request.path_params["email_id"], _account_of(emu, request.query_params))


def message_headers(raw: bytes) -> list[dict[str, str]]:
    return _message_headers(raw)


async def _detail_of(emu: Emulator, row: Row) -> dict[str, Any]:
    async with emu.transaction(row["account"]) as tx:
        return await detail(tx, row)


async def _newest_match(emu: Emulator, outbox_filter: OutboxFilter,
                        among: list[str] | None = None) -> Row | None:
    where, params = outbox_filter.where()
    if among is not None:
        where += f" AND id IN ({', '.join('?' for _ in among)})"
        params = [*params, *among]
    async with emu.transaction() as tx:
        await outbox_filter.prepare(tx)
        found = await windows.rows(tx, "emails", where, params, "*", limit=1)
    return found[0] if found else None


# ---- routes ------------------------------------------------------------------------------------

async def list_outbox(request: Request) -> Response:
    emu = emulator_of(request)
    outbox_filter = parse_filter(emu, request.query_params)
    where, params = outbox_filter.where()
    page = parse_page(request.query_params, optional_limit=False)
    async with emu.transaction() as tx:
        await outbox_filter.prepare(tx)
        rows, has_more = await windows.page(tx, "emails", page, where, params, LIST_COLUMNS)
    return json_response(list_body([summary(row, account_label(emu, row["account"])) for row in rows],
                                   has_more))


async def count_outbox(request: Request) -> Response:
    """`{"object": "count", "count": 12345, "upto_seq": …}`: exact, in windows of `seq` that leave the
    loop and the database to others between them (windows.py `count`), so it may take a while at 1 M."""
    emu = emulator_of(request)
    outbox_filter = parse_filter(emu, request.query_params)
    where, params = outbox_filter.where()
    async with emu.transaction() as tx:
        await outbox_filter.prepare(tx)
        total, upto = await windows.count(tx, "emails", where, params)
    return json_response({"object": "count", "count": total, "upto_seq": upto})


async def get_email(request: Request) -> Response:
    emu = emulator_of(request)
    row = await _email_row(emu, request.path_params["email_id"], _account_of(emu, request.query_params))
    return json_response(await _detail_of(emu, row))


async def get_eml(request: Request) -> Response:
    emu = emulator_of(request)
    email_id = request.path_params["email_id"]
    row = await _email_row(emu, email_id, _account_of(emu, request.query_params))
    async with emu.transaction(row["account"]) as tx:
        raw = await email_eml(tx, row)
    return eml_response(raw, email_id)


async def get_attachment(request: Request) -> Response:
    emu = emulator_of(request)
    email_id, attachment_id = request.path_params["email_id"], request.path_params["attachment_id"]
    row = await _email_row(emu, email_id, _account_of(emu, request.query_params))
    async with emu.transaction(row["account"]) as tx:
        part = await tx.one("SELECT * FROM email_attachments WHERE id = ? AND email_id = ? AND account = ?",
                            (attachment_id, email_id, row["account"]))
    if part is None:
        raise not_found("Attachment")
    return file_response(bytes(part["content"]), part["content_type"], part["filename"] or attachment_id,
                         inline=part["disposition"] == "inline")


def _wait_seconds(query: QueryParams) -> float:
    raw = query.get("timeout")
    if raw is None:
        return DEFAULT_WAIT_SECONDS
    return decimal(raw, "timeout", maximum=MAX_WAIT_SECONDS)


async def wait_for_email(request: Request) -> Response:
    """Long-poll: reply with the newest email matching the filter as soon as one exists.

    A listener on the event bus (called after each commit) hands the ids of changed emails to this
    waiter, which re-checks only those rows: no polling, and a send wakes it within the same
    event-loop turn as its commit. The timeout is wall-clock time, not the emulator clock.
    """
    emu = emulator_of(request)
    outbox_filter = parse_filter(emu, request.query_params)
    seconds = _wait_seconds(request.query_params)
    changed: asyncio.Queue[str] = asyncio.Queue()

    def on_event(event: Event) -> None:
        if event["subject_id"] and outbox_filter.account in (None, event["account"]):
            changed.put_nowait(event["subject_id"])

    def on_stop() -> None:  # a poll must not hold a stop (issue 38): it ends now, as a timeout would
        changed.put_nowait(STOPPING)

    emu.events.listen(on_event)
    emu.stop_hooks.append(on_stop)
    if emu.stopping:  # it came in as the stop began: an email already there is still its answer
        on_stop()
    try:
        row = await _wait(emu, outbox_filter, changed, seconds)
    finally:
        emu.events.unlisten(on_event)
        emu.stop_hooks.remove(on_stop)
    if row is None and emu.stopping:
        raise ApiError(errors.WAIT_TIMEOUT, "No email matching the filter arrived before the emulator"
                                            " stopped.")
    if row is None:
        raise ApiError(errors.WAIT_TIMEOUT, f"No email matching the filter arrived within {seconds:g} s.")
    return json_response(await _detail_of(emu, row))


async def _wait(emu: Emulator, outbox_filter: OutboxFilter, changed: asyncio.Queue[str],
                seconds: float) -> Row | None:
    row = await _newest_match(emu, outbox_filter)
    try:
        async with asyncio.timeout(seconds):
            while row is None:
                ids = [await changed.get()]
                while not changed.empty():
                    ids.append(changed.get_nowait())
                if STOPPING in ids:
                    return None
                row = await _newest_match(emu, outbox_filter, sorted(set(ids)))
    except TimeoutError:
        return None
    return row


ROUTES = [
    Route(BASE, list_outbox, methods=["GET"]),
    Route(f"{BASE}/wait", wait_for_email, methods=["GET"]),
    Route(f"{BASE}/count", count_outbox, methods=["GET"]),
    Route(f"{BASE}/{{email_id}}.eml", get_eml, methods=["GET"]),
    Route(f"{BASE}/{{email_id}}/attachments/{{attachment_id}}", get_attachment, methods=["GET"]),
    Route(f"{BASE}/{{email_id}}", get_email, methods=["GET"]),
]
