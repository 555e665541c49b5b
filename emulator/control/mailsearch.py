"""The search language of query.py over received mail and inbox threads (sent mail: search.py).

These tables have no full-text index: a text term is a substring of its field(s), case and accents
set aside (core/fold.py), free text of the sender, recipients, subject and text body (`addressed:` the
sender or any recipient or Reply-To address), tested in linear time
(core/substring.py), by statements that run off the loop (`scan_off_loop`). A thread matches a term when
one of its messages does (`-from:ada` is then a thread with no message from ada), except `is:read` /
`is:unread`, which ask about the whole thread. Keys about what only sent mail has (`status:`, `tag:`,
`label:`, `is:bounced`, `is:tagged`) are refused with a sentence, like any other wrong query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.control import query, reads
from emulator.control.query import Term, instant_of, size_of
from emulator.core import substring
from emulator.core.clock import to_db
from emulator.core.errors import invalid

if TYPE_CHECKING:
    from emulator.core.db import Tx


class Target(NamedTuple):
    """How one kind of list answers each key: SQL over `alias`, the rows one term is tested on."""

    name: str
    alias: str
    text: dict[str, tuple[str, ...]]
    has_attachment: str
    has_inline: str
    size: str
    created: str
    read: str  # holds for read rows
    wrap: str = "{}"  # how a message-level test becomes a test of the listed row


def _text_columns(alias: str, message_id: str, body: str) -> dict[str, tuple[str, ...]]:
    columns = {"from": ("from_addr",), "to": ("to_addrs", "cc", "bcc"), "cc": ("cc",), "bcc": ("bcc",),
               "reply-to": ("reply_to",), "subject": ("subject",), "message-id": (message_id,),
               "addressed": ("from_addr", "to_addrs", "cc", "bcc", "reply_to"),
               "": ("from_addr", "to_addrs", "cc", "bcc", "subject", body)}
    return {key: tuple(f"{alias}.{c}" if c.isidentifier() else c for c in cs) for key, cs in columns.items()}


RECEIVED = Target(
    name="received mail", alias="received_emails",
    text=_text_columns("received_emails", "message_id", "text"),
    has_attachment=("EXISTS (SELECT 1 FROM received_attachments a WHERE a.email_id = received_emails.id"
                    " AND a.account = received_emails.account)"),
    has_inline=("EXISTS (SELECT 1 FROM received_attachments a WHERE a.email_id = received_emails.id"
                " AND a.account = received_emails.account"
                " AND (a.content_id IS NOT NULL OR a.content_disposition = 'inline'))"),
    size="length(received_emails.raw)", created="received_emails.created_at",
    read=reads.read_test("received", "received_emails", True),
)
_UNREAD_MESSAGE = ("EXISTS (SELECT 1 FROM inbox_messages u WHERE u.thread_id = inbox_threads.id"
                   " AND u.read = 0)")
THREADS = Target(
    name="inbox threads", alias="m",
    text=_text_columns("m", "coalesce(m.message_id, m.header_id)", "text"),
    has_attachment="m.attachments != '[]'",
    # A thread message lists its files as {id, filename, size} (inboxes/store.py): which are inline is
    # in the stored attachments of the email it came from, received or sent.
    has_inline=("EXISTS (SELECT 1 FROM json_each(m.attachments) f WHERE EXISTS (SELECT 1 FROM"
                " received_attachments r WHERE r.id = json_extract(f.value, '$.id') AND (r.content_id IS NOT"
                " NULL OR r.content_disposition = 'inline')) OR EXISTS (SELECT 1 FROM email_attachments e"
                " WHERE e.id = json_extract(f.value, '$.id') AND (e.content_id IS NOT NULL"
                " OR e.disposition = 'inline')))"),
    size=("(length(CAST(coalesce(m.html, '') AS BLOB)) + length(CAST(coalesce(m.text, '') AS BLOB)) + "
          "coalesce((SELECT sum(json_extract(f.value, '$.size')) FROM json_each(m.attachments) f), 0))"),
    created="m.received_at",
    read=f"NOT {_UNREAD_MESSAGE}",
    wrap="EXISTS (SELECT 1 FROM inbox_messages m WHERE m.thread_id = inbox_threads.id AND ({}))",
)


def _like(value: str, columns: tuple[str, ...]) -> tuple[str, list[Any]]:
    return substring.sql(columns), [substring.needle(value)]


async def scan_off_loop(tx: Tx) -> None:
    """These tables have no index: a text term scans bodies, so the search's statements leave the loop."""
    tx.scan_off_loop()


def _refuse(target: Target, term: Term) -> None:
    if term.key in ("status", "tag", "label") or (term.key == "is" and term.value not in ("read", "unread")):
        written = f"{term.key}:{term.value}" if term.key == "is" else f"{term.key}:"
        raise invalid(f"`{written}` applies to sent mail only; {target.name} have no status or tags.")


def _message_test(target: Target, term: Term) -> tuple[str, list[Any]]:
    if term.key in target.text:
        return _like(term.value, target.text[term.key])
    if term.key == "has":
        return (target.has_inline if term.value == "inline" else target.has_attachment), []
    if term.key in ("larger", "smaller"):
        return f"{target.size} {'>' if term.key == 'larger' else '<'} ?", [size_of(term)]
    return f"{target.created} {'<' if term.key == 'before' else '>='} ?", [to_db(instant_of(term))]


def _sql(target: Target, term: Term) -> tuple[str, list[Any]]:
    _refuse(target, term)
    params: list[Any] = []
    if term.key == "is":
        sql = target.read if term.value == "read" else f"NOT ({target.read})"
    else:
        sql, params = _message_test(target, term)
        sql = target.wrap.format(sql)
    return (f"NOT ({sql})" if term.negated else sql), params


def where(target: Target, text: str) -> tuple[str, list[Any]]:
    """SQL (and its parameters) for the rows `text` finds; raises 422 validation_error when it is wrong."""
    clauses: list[str] = []
    params: list[Any] = []
    for clause in query.parse(text):
        parts = [_sql(target, term) for term in clause]
        clauses.append(" OR ".join(f"({sql})" for sql, _ in parts))
        params += [param for _, part in parts for param in part]
    return " AND ".join(f"({sql})" for sql in clauses) or "1 = 1", params
