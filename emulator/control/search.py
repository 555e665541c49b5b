"""Sent-mail search: the query language of query.py over the trigram index of sent mail (mailindex.py).

A text term is a substring of its field(s) (issue 39: no longer whole words by prefix), case and
accents set aside (core/fold.py): free text is the sender, recipients, subject, text body and the
attachments' file names; `to:` any To/Cc/Bcc recipient; `addressed:` the sender or any recipient or
Reply-To address; `from:`, `cc:`, `bcc:`, `reply-to:`, `subject:` that one field. A quoted term is a
substring too, spaces and all.

The index answers terms of MIN_CHARS characters (folded) or more, from their first MAX_INDEXED_CHARS
characters; a longer term is then checked whole on the candidates by the linear scan (core/substring.py),
and a shorter one (`注文`, `%`), or `message-id:`, is that scan alone. Positive terms the index answers
whole (and ORs of them) go into one index lookup. Every lookup walks in windows of seq
(control/windows.py), so no statement runs long however common the term.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from emulator.control import labels, query, reads, windows
from emulator.control.mailindex import TABLE
from emulator.control.mailindex import index_new_mail as index_new_mail  # re-exported: the lists' catch-up
from emulator.control.query import STATUSES as STATUSES  # re-exported: the last_event values
from emulator.control.query import Term, instant_of, size_of
from emulator.core import substring
from emulator.core.clock import to_db
from emulator.core.fold import fold

MIN_CHARS = 3  # a trigram: shorter terms have none to look up
# The most of a term the index is asked for: past this the phrase match costs more than it narrows
# (issue 36: a 2 KB term took 8.4 s in one statement); the scan checks the rest.
MAX_INDEXED_CHARS = 64
INDEX_COLUMNS = {"": "{sender recipients cc bcc subject body files}", "from": "sender",
                 "to": "{recipients cc bcc}", "cc": "cc", "bcc": "bcc", "reply-to": "reply_to",
                 "subject": "subject", "addressed": "{sender recipients cc bcc reply_to}"}
_FILES = "(SELECT group_concat(filename, ' ') FROM email_attachments f WHERE f.email_id = emails.id)"
SCAN_COLUMNS = {"": ("from_addr", "to_addrs", "cc", "bcc", "subject", "coalesce(text, html)", _FILES),
                "from": ("from_addr",), "to": ("to_addrs", "cc", "bcc"), "subject": ("subject",),
                "cc": ("cc",), "bcc": ("bcc",), "reply-to": ("reply_to",), "message-id": ("message_id",),
                "addressed": ("from_addr", "to_addrs", "cc", "bcc", "reply_to")}
TAGGED = "json_array_length(coalesce(tags, '[]')) > 0"
# The message's size for `larger:`/`smaller:`: its bodies and attachments (the .eml is rendered lazily).
SIZE = ("(length(CAST(coalesce(html, '') AS BLOB)) + length(CAST(coalesce(text, '') AS BLOB)) + coalesce("
        "(SELECT sum(a.size) FROM email_attachments a WHERE a.email_id = emails.id), 0))")
_ATTACHMENT = "SELECT 1 FROM email_attachments a WHERE a.email_id = emails.id AND a.account = emails.account"
HAS_ATTACHMENT = f"EXISTS ({_ATTACHMENT})"
# An inline attachment: one the HTML shows by its Content-ID (`cid:`), or one marked inline.
HAS_INLINE = f"EXISTS ({_ATTACHMENT} AND (a.content_id IS NOT NULL OR a.disposition = 'inline'))"
INDEX_MATCH = f"seq IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ? {windows.INDEX_WINDOW})"


@dataclass
class Search:
    """A parsed query: an index expression plus the filters the index does not answer alone."""

    fts: list[str] = field(default_factory=list)
    clauses: list[tuple[str, list[Any]]] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        clauses = list(self.clauses)
        if self.fts:
            clauses.append((INDEX_MATCH, [" AND ".join(self.fts)]))
        sql = " AND ".join(f"({sql})" for sql, _ in clauses) or "1 = 1"
        return sql, [param for _, params in clauses for param in params]


def tag_clause(name: str, value: str | None) -> tuple[str, list[Any]]:
    test, params = "json_extract(t.value, '$.name') = ?", [name]
    if value is not None:
        test += " AND json_extract(t.value, '$.value') = ?"
        params.append(value)
    return f"EXISTS (SELECT 1 FROM json_each(emails.tags) AS t WHERE {test})", params


def _scan(value: str, columns: tuple[str, ...]) -> tuple[str, list[Any]]:
    return substring.sql(columns), [substring.needle(value)]


def _index(term: Term) -> str | None:
    """The index expression for a text term (its first MAX_INDEXED_CHARS characters), or None when the
    index cannot answer it."""
    column = INDEX_COLUMNS.get(term.key)
    folded = fold(term.value)
    # SQLite reads a match expression as a C string: a NUL would end it mid-phrase (a 500, found by
    # test_fuzz_numbers). Such a term is left to the scan, which compares whole Python strings.
    if column is None or len(folded) < MIN_CHARS or "\x00" in folded:
        return None
    phrase = folded[:MAX_INDEXED_CHARS].replace('"', '""')
    return f'{column} : "{phrase}"'


def _whole(term: Term) -> bool:
    """Whether the index's answer for the term is the answer (not candidates to check)."""
    return len(fold(term.value)) <= MAX_INDEXED_CHARS


def _filter(term: Term) -> tuple[str, list[Any]]:
    key, value = term.key, term.value
    if key == "is" and value in ("tagged", "untagged"):
        return (TAGGED if value == "tagged" else f"NOT ({TAGGED})"), []
    if key == "is" and value in ("read", "unread"):
        return reads.read_test("outbox", "emails", value == "read"), []
    if key in ("status", "is"):
        return "last_event = ?", [value]
    if key == "tag":
        name, sep, tag_value = value.partition(":")
        return tag_clause(name, tag_value if sep else None)
    if key == "label":
        return labels.clause(value)
    if key == "has":
        return (HAS_INLINE if value == "inline" else HAS_ATTACHMENT), []
    if key in ("larger", "smaller"):
        return f"{SIZE} {'>' if key == 'larger' else '<'} ?", [size_of(term)]
    return f"created_at {'<' if key == 'before' else '>='} ?", [to_db(instant_of(term))]


def _positive(term: Term) -> tuple[str, list[Any]]:
    expression = _index(term)
    if expression is not None and _whole(term):
        return INDEX_MATCH, [expression]
    if expression is not None:  # candidates from the index, each checked whole by the scan
        check, params = _scan(term.value, SCAN_COLUMNS[term.key])
        return f"{INDEX_MATCH} AND {check}", [expression, *params]
    if term.key in SCAN_COLUMNS:
        return _scan(term.value, SCAN_COLUMNS[term.key])
    return _filter(term)


def _sql(term: Term) -> tuple[str, list[Any]]:
    sql, params = _positive(term)
    return (f"NOT ({sql})" if term.negated else sql), params


def parse_search(text: str) -> Search:
    """Raises 422 validation_error, with a sentence for the user, when the query is wrong."""
    search = Search()
    for clause in query.parse(text):
        expressions = [None if term.negated or not _whole(term) else _index(term) for term in clause]
        if all(expressions):  # index terms only: one lookup for the whole clause, ORs included
            joined = " OR ".join(e for e in expressions if e)
            search.fts.append(f"({joined})" if len(expressions) > 1 else joined)
            continue
        parts = [_sql(term) for term in clause]
        search.clauses.append((" OR ".join(f"({sql})" for sql, _ in parts),
                               [param for _, params in parts for param in params]))
    return search
