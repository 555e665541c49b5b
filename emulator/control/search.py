"""Outbox search: a query language like a mail catcher's, backed by an SQLite FTS5 index of sent mail.

    from:billing@acme.dev   the sender (name or address)        to:ada        any To/Cc/Bcc recipient
    subject:"order shipped" the subject                         invoice       free text: sender, recipients,
    tag:plan or tag:plan:pro  a tag (name, or name:value)                     subject or body
    status:bounced          the email's last event              has:attachment
    is:bounced (any status), is:tagged / is:untagged
    after:2026-05-01        created on or after (a date: its 00:00 UTC; or an ISO timestamp)
    before:2026-05-14       created before

Terms are ANDed. Text terms match whole words, the last word of each by prefix (`from:bill` finds
billing@…) unless punctuation ends the term (`user77@` is not `user770@`), case- and
accent-insensitively: `from:billing@acme.dev` is the phrase `billing acme dev`.
Quote a value that has spaces. A `key:` this language does not know is searched as free text.

The index (`emails_fts`, rowid = `emails.seq`) is brought up to date by each search, in the search's own
transaction, before it reads (`index_new_mail`): rows whose seq is above the highest one indexed are
added. So every way mail enters — API, SMTP, broadcasts, scenarios, an older database file — is found,
and a send does not pay for indexing: per send, an insert trigger cost ~45 µs in memory and ~60 µs
with a database file (issue 18), while catching up a thousand emails at once costs a few milliseconds.
`emails.seq` only grows (AUTOINCREMENT), so "above the highest indexed" is exactly "not yet indexed".
Indexed fields never change after insert (only the generated text part is stored later, and it is made
of the HTML's own words), so no update trigger is needed; a delete trigger keeps deleted mail out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from emulator.core.clock import parse_iso, to_db
from emulator.core.db import Tx
from emulator.core.errors import invalid


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
    WHERE seq > coalesce((SELECT rowid FROM emails_fts ORDER BY rowid DESC LIMIT 1), 0)"""
STATUSES = ("bounced", "canceled", "clicked", "complained", "delivered", "delivery_delayed", "failed",
            "opened", "queued", "scheduled", "sent", "suppressed")
COLUMNS = {"from": "sender", "to": "recipients", "subject": "subject"}
ROW_COLUMNS = {"from": ("from_addr",), "to": ("to_addrs", "cc", "bcc"), "subject": ("subject",)}
KEYS = {*COLUMNS, "tag", "status", "is", "has", "before", "after"}
TAGGED = "json_array_length(coalesce(tags, '[]')) > 0"
_TERM = re.compile(r'(?:([A-Za-z]+):)?("([^"]*)"?|\S+)')


@dataclass
class Search:
    """A parsed query: an FTS5 expression plus the filters FTS cannot answer."""

    fts: list[str] = field(default_factory=list)
    clauses: list[tuple[str, list[Any]]] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        clauses = list(self.clauses)
        if self.fts:
            clauses.append(("seq IN (SELECT rowid FROM emails_fts WHERE emails_fts MATCH ?)",
                            [" AND ".join(self.fts)]))
        sql = " AND ".join(f"({sql})" for sql, _ in clauses) or "1 = 1"
        return sql, [param for _, params in clauses for param in params]


def index_new_mail(tx: Tx) -> None:
    """Index the mail stored since the last search; it travels with the search's own query."""
    tx.queue(_INDEX_NEW)


def tag_clause(name: str, value: str | None) -> tuple[str, list[Any]]:
    test, params = "json_extract(t.value, '$.name') = ?", [name]
    if value is not None:
        test += " AND json_extract(t.value, '$.value') = ?"
        params.append(value)
    return f"EXISTS (SELECT 1 FROM json_each(emails.tags) AS t WHERE {test})", params


def _words(value: str) -> list[str]:
    """Letters and digits, split where FTS5's unicode61 tokenizer splits (`_` included)."""
    return re.findall(r"[^\W_]+", value.lower())


def _phrase(value: str) -> str | None:
    """`billing@acme.dev` → `"billing acme dev"*` (the index holds the same tokens). The last word is a
    prefix unless punctuation ends the value: `user77@` means the whole word `user77`."""
    words = _words(value)
    if not words:
        return None
    prefix = "*" if _words(value[-1]) else ""
    return f'"{" ".join(words)}"{prefix}'


def _like(value: str, columns: tuple[str, ...]) -> tuple[str, list[Any]]:
    """Punctuation alone (`%`, `_`, `+`) has no token to look up: a substring scan finds it."""
    escaped = "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    sql = " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in columns)
    return sql, [escaped] * len(columns)


def _instant(key: str, value: str) -> datetime:
    try:
        return parse_iso(value)
    except ValueError:
        message = f"`{key}:` takes a date (2026-05-14) or an ISO 8601 timestamp, not `{value}`."
        raise invalid(message) from None


def _filter(search: Search, key: str, value: str) -> None:
    if key == "is" and value in ("tagged", "untagged"):
        search.clauses.append((TAGGED if value == "tagged" else f"NOT ({TAGGED})", []))
    elif key in ("status", "is"):
        if value not in STATUSES:
            extra = ", tagged, untagged" if key == "is" else ""
            raise invalid(f"`{key}:` must be one of: {', '.join(STATUSES)}{extra}.")
        search.clauses.append(("last_event = ?", [value]))
    elif key == "tag":
        name, sep, tag_value = value.partition(":")
        search.clauses.append(tag_clause(name, tag_value if sep else None))
    elif key == "has":
        if value not in ("attachment", "attachments"):
            raise invalid("`has:` supports `has:attachment`.")
        search.clauses.append(("EXISTS (SELECT 1 FROM email_attachments a WHERE a.email_id = emails.id"
                               " AND a.account = emails.account)", []))
    else:
        operator = "<" if key == "before" else ">="
        search.clauses.append((f"created_at {operator} ?", [to_db(_instant(key, value))]))


def parse_search(query: str) -> Search:
    search = Search()
    for match in _TERM.finditer(query.strip()):
        key, raw, quoted = (match.group(1) or "").lower(), match.group(2), match.group(3)
        value = quoted if quoted is not None else raw
        if key and key not in KEYS:
            key, value = "", match.group(0)
        if not value.strip():
            continue
        if key in COLUMNS:
            phrase = _phrase(value)
            if phrase:
                search.fts.append(f"{COLUMNS[key]} : {phrase}")
            else:
                search.clauses.append(_like(value, ROW_COLUMNS[key]))
        elif key:
            _filter(search, key, value.strip())
        elif phrase := _phrase(value):
            search.fts.append(phrase)
        else:
            search.clauses.append(_like(value, ("from_addr", "to_addrs", "cc", "bcc", "subject")))
    return search

