"""Sent-mail search: the query language of query.py over an SQLite FTS5 index of sent mail.

Text terms (free text, `from:`, `to:`, `subject:`) go to the index: they match whole words, the last
word of each by prefix (`from:bill` finds billing@…) unless punctuation ends the term (`user77@` is not
`user770@`) or the term is quoted (a phrase as written), case- and accent-insensitively:
`from:billing@acme.dev` is the phrase `billing acme dev`. `to:` is any To/Cc/Bcc recipient; `cc:`,
`bcc:`, `reply-to:` and `message-id:` are substrings of that one field, as is a term made of punctuation
alone (`%`, `+`). Positive text terms (and ORs of them) go into one index lookup; a negated one, or one
ORed with a filter the index cannot answer, gets a lookup of its own.

The index (`emails_fts`, rowid = `emails.seq`) is brought up to date by each search before it reads
(`index_new_mail`): rows whose seq is above the highest one indexed are added, in chunks that each
commit on their own, off the loop, and take about windows.WINDOW_SECONDS (issue 36: 50 MB of new mail
was one 0.3–1 s step that every other request waited for). So every way mail enters — API, SMTP,
broadcasts, scenarios, an older database file — is found, and a send does not pay for indexing: per
send, an insert trigger cost ~45 µs in memory and ~60 µs with a database file (issue 18), while
catching up a thousand emails at once costs a few milliseconds.
`emails.seq` only grows (AUTOINCREMENT), so "above the highest indexed" is exactly "not yet indexed".
Indexed fields never change after insert (only the generated text part is stored later, and it is made
of the HTML's own words), so no update trigger is needed; a delete trigger keeps deleted mail out.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from emulator.control import labels, query, reads, windows
from emulator.control.query import STATUSES as STATUSES  # re-exported: the last_event values
from emulator.control.query import Term, instant_of, size_of
from emulator.core import substring
from emulator.core.clock import to_db
from emulator.core.db import Tx


def _indexed() -> str:
    """The indexed values of an emails row."""
    recipients = " || ' ' || ".join(f"coalesce({c}, '')" for c in ("to_addrs", "cc", "bcc"))
    return f"from_addr, {recipients}, subject, coalesce(text, html, '')"


TABLES = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS emails_fts USING fts5(
        sender, recipients, subject, body, tokenize = 'unicode61 remove_diacritics 2')""",
    "DROP TRIGGER IF EXISTS emails_fts_insert",  # database files from before the index caught up lazily
    """CREATE TRIGGER IF NOT EXISTS emails_fts_delete AFTER DELETE ON emails BEGIN
        DELETE FROM emails_fts WHERE rowid = old.seq;
    END""",
]
_INDEX_NEW = f"""INSERT INTO emails_fts (rowid, sender, recipients, subject, body)
    SELECT seq, {_indexed()} FROM emails
    WHERE seq > coalesce((SELECT rowid FROM emails_fts ORDER BY rowid DESC LIMIT 1), 0)
    ORDER BY seq LIMIT ?"""
FTS_COLUMNS = {"": None, "from": "sender", "to": "recipients", "subject": "subject"}
LIKE_COLUMNS = {"": ("from_addr", "to_addrs", "cc", "bcc", "subject"), "from": ("from_addr",),
                "to": ("to_addrs", "cc", "bcc"), "subject": ("subject",), "cc": ("cc",), "bcc": ("bcc",),
                "reply-to": ("reply_to",), "message-id": ("message_id",)}
TAGGED = "json_array_length(coalesce(tags, '[]')) > 0"
# The message's size for `larger:`/`smaller:`: its bodies and attachments (the .eml is rendered lazily).
SIZE = ("(length(CAST(coalesce(html, '') AS BLOB)) + length(CAST(coalesce(text, '') AS BLOB)) + coalesce("
        "(SELECT sum(a.size) FROM email_attachments a WHERE a.email_id = emails.id), 0))")
HAS_ATTACHMENT = ("EXISTS (SELECT 1 FROM email_attachments a WHERE a.email_id = emails.id"
                  " AND a.account = emails.account)")
FTS_MATCH = "seq IN (SELECT rowid FROM emails_fts WHERE emails_fts MATCH ?)"


@dataclass
class Search:
    """A parsed query: an FTS5 expression plus the filters FTS cannot answer."""

    fts: list[str] = field(default_factory=list)
    clauses: list[tuple[str, list[Any]]] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        clauses = list(self.clauses)
        if self.fts:
            clauses.append((FTS_MATCH, [" AND ".join(self.fts)]))
        sql = " AND ".join(f"({sql})" for sql, _ in clauses) or "1 = 1"
        return sql, [param for _, params in clauses for param in params]


async def index_new_mail(tx: Tx) -> None:
    """Index the mail stored since the last search, a chunk at a time, each committed apart (before the
    search's own transaction writes: `Tx.write_apart`), with others' transactions between chunks; then
    the search's statements run off the loop too (a substring scan can take a while)."""
    tx.scan_off_loop()
    rows = windows.FIRST_SPAN
    while True:
        began = time.perf_counter()
        added = await tx.write_apart(_INDEX_NEW, (rows,))
        if added < rows:
            return
        rows = windows.next_span(rows, time.perf_counter() - began)
        await tx.let_others_in()


def tag_clause(name: str, value: str | None) -> tuple[str, list[Any]]:
    test, params = "json_extract(t.value, '$.name') = ?", [name]
    if value is not None:
        test += " AND json_extract(t.value, '$.value') = ?"
        params.append(value)
    return f"EXISTS (SELECT 1 FROM json_each(emails.tags) AS t WHERE {test})", params


def _words(value: str) -> list[str]:
    """Letters and digits, split where FTS5's unicode61 tokenizer splits (`_` included)."""
    return re.findall(r"[^\W_]+", value.lower())


def _phrase(value: str, exact: bool = False) -> str | None:
    """`billing@acme.dev` → `"billing acme dev"*` (the index holds the same tokens). The last word is a
    prefix unless punctuation ends the value (`user77@` means the whole word `user77`) or it is `exact`."""
    words = _words(value)
    if not words:
        return None
    prefix = "*" if _words(value[-1]) and not exact else ""
    return f'"{" ".join(words)}"{prefix}'


def _like(value: str, columns: tuple[str, ...]) -> tuple[str, list[Any]]:
    """Punctuation alone (`%`, `_`, `+`) has no token to look up: a substring scan finds it."""
    return substring.sql(columns), [substring.needle(value)]


def _fts(term: Term) -> str | None:
    """The index expression for a text term, or None when it has no words to look up."""
    if term.key not in FTS_COLUMNS:
        return None
    phrase = _phrase(term.value, exact=term.quoted)
    column = FTS_COLUMNS[term.key]
    return f"{column} : {phrase}" if phrase and column else phrase


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
        return HAS_ATTACHMENT, []
    if key in ("larger", "smaller"):
        return f"{SIZE} {'>' if key == 'larger' else '<'} ?", [size_of(term)]
    return f"created_at {'<' if key == 'before' else '>='} ?", [to_db(instant_of(term))]


def _positive(term: Term) -> tuple[str, list[Any]]:
    expression = _fts(term)
    if expression is not None:
        return FTS_MATCH, [expression]
    if term.key in LIKE_COLUMNS:
        return _like(term.value, LIKE_COLUMNS[term.key])
    return _filter(term)


def _sql(term: Term) -> tuple[str, list[Any]]:
    sql, params = _positive(term)
    return (f"NOT ({sql})" if term.negated else sql), params


def parse_search(text: str) -> Search:
    """Raises 422 validation_error, with a sentence for the user, when the query is wrong."""
    search = Search()
    for clause in query.parse(text):
        expressions = [None if term.negated else _fts(term) for term in clause]
        if all(expressions):  # words only: one index lookup for the whole clause, ORs included
            joined = " OR ".join(e for e in expressions if e)
            search.fts.append(f"({joined})" if len(expressions) > 1 else joined)
            continue
        parts = [_sql(term) for term in clause]
        search.clauses.append((" OR ".join(f"({sql})" for sql, _ in parts),
                               [param for _, params in parts for param in params]))
    return search
