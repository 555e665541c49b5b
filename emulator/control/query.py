"""The search language of the UI's mail lists: one parser for sent mail, received mail and inboxes.

    from:billing@acme.dev   to:ada   cc:  bcc:  reply-to:  subject:"order shipped"  message-id:
    addressed:ada           the sender, or any To/Cc/Bcc/Reply-To address
    tag:plan  tag:plan:pro   status:bounced (or is:bounced)   is:read  is:unread  is:tagged  is:untagged
    label:checked       a label put on by hand (control/labels.py)
    has:attachment   has:inline (an attachment shown inline, by cid:)
    larger:100k   smaller:2M   after:2026-05-01   before:2026-05-14T09:00:00Z
    invoice             free text (sender, recipients, subject, body, attachment names)
    "order shipped"     a phrase, spaces and all
    -is:bounced         not
    invoice OR export   either (OR binds tighter than the spaces that AND terms: Gmail's way)

`parse` turns a query into clauses that must all hold, each a list of terms of which one must hold.
Everything a user can get wrong is refused here with a sentence saying what is wrong (an unknown
`key:`, a bad status or size or date, an unclosed quote, a dangling OR), so the three lists answer a
wrong query the same way. Which keys apply to which list, and the SQL, are the compilers' business:
search.py (sent mail, over its trigram index) and mailsearch.py (received mail and inbox threads).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from emulator.core.errors import invalid
from emulator.core.typed import instant

STATUSES = ("bounced", "canceled", "clicked", "complained", "delivered", "delivery_delayed", "failed",
            "opened", "queued", "scheduled", "sent", "suppressed")
FLAGS = ("read", "unread", "tagged", "untagged")
TEXT_KEYS = ("from", "to", "cc", "bcc", "reply-to", "subject", "message-id", "addressed")
HAS = ("attachment", "attachments", "inline")
KEYS = (*TEXT_KEYS, "tag", "label", "status", "is", "has", "larger", "smaller", "before", "after")
SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024 ** 2, "mb": 1024 ** 2}
# A term: optional `-`, optional `key:`, then a quoted value (maybe unclosed) or a run of non-spaces.
# A `scheme://` is a pasted link, free text rather than a key.
_TERM = re.compile(r'(-?)(?:([A-Za-z][A-Za-z-]*):(?!//))?(?:"([^"]*)("?)|(\S*))')
_SIZE = re.compile(r"([0-9]+)(?:\.([0-9]+))?\s*([a-z]*)")
MAX_TERMS = 32  # a query is typed by a person; more than this is a paste gone wrong
# The longest term: a pasted paragraph (4 KB) still searches; past it, a paste gone wrong. It also keeps
# the outbox's LIKE patterns far below SQLite's 50 000-byte limit (4 bytes a character at most).
MAX_TERM_CHARS = 4_096
# The longest query read at all, before any parsing: a 4 KB pasted term and a few keys beside it. (Ten
# times it still fits a URL, so the bound can be tested through real HTTP.)
MAX_QUERY_CHARS = 6_000
# The largest `larger:`/`smaller:`: 1 TB, far past any stored message (40 MB) and far inside SQLite's
# 64-bit integers; `larger:99999999999999999999999` is a typo, not a size.
MAX_SIZE = 1 << 40
# Fraction digits read in a size (`1.5M`): past a millionth of a unit they change no byte count.
_FRACTION_DIGITS = 6


class Term(NamedTuple):
    key: str  # "" for free text
    value: str
    negated: bool = False
    quoted: bool = False


Query = list[list[Term]]


def known_keys() -> str:
    return ", ".join(f"`{key}:`" for key in KEYS)


def _check(term: Term) -> None:
    key, value = term.key, term.value
    if key in ("status", "is"):
        allowed = STATUSES + (FLAGS if key == "is" else ())
        if value not in allowed:
            raise invalid(f"`{key}:` must be one of: {', '.join(allowed)}.")
    elif key == "has" and value not in HAS:
        raise invalid("`has:` supports `has:attachment` and `has:inline`.")
    elif key in ("larger", "smaller"):
        size_of(term)
    elif key in ("before", "after"):
        instant_of(term)


def size_of(term: Term) -> int:
    """`larger:10k` → 10 240 bytes (k and m count in 1 024s, as mail clients do), at most MAX_SIZE."""
    found = _SIZE.fullmatch(term.value.strip().lower())
    if found is None or found.group(3) not in SIZE_UNITS:
        raise invalid(f"`{term.key}:` takes a size such as 500, 20k or 1.5M, not `{_shown(term.value)}`.")
    whole, fraction, unit = found.groups()
    scale = SIZE_UNITS[unit]
    digits = whole.lstrip("0")
    size = None
    if len(digits) <= len(str(MAX_SIZE)):  # no 400-digit int() for a typo
        fraction = (fraction or "")[:_FRACTION_DIGITS]
        size = int(digits or 0) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
    if size is None or size > MAX_SIZE:
        raise invalid(f"`{term.key}:` takes a size up to 1 TB ({MAX_SIZE // SIZE_UNITS['m']}M),"
                      f" not `{_shown(term.value)}`.")
    return size


def instant_of(term: Term) -> datetime:
    return instant(term.value, f"{term.key}:")


def _shown(value: str) -> str:
    return value if len(value) <= 40 else value[:40] + "…"


def _term(match: re.Match[str]) -> Term:
    negated, key, quoted, closed, bare = match.groups()
    key = (key or "").lower()
    if quoted is not None and not closed:
        raise invalid('A quote is not closed: end the phrase with `"`.')
    if key and key not in KEYS:
        raise invalid(f"Unknown operator `{key}:`. Use one of {known_keys()}, or quote the text"
                      f' ("{match.group(0).lstrip("-")}") to search for it.')
    value = quoted if quoted is not None else bare or ""
    if len(value) > MAX_TERM_CHARS:
        raise invalid(_TERM_TOO_LONG)
    if key and not value.strip():
        raise invalid(f"`{key}:` needs a value, as in `{key}:{_example(key)}`.")
    term = Term(key, value.strip() if key else value, bool(negated), quoted is not None)
    if key:
        _check(Term(key, value.strip().lower() if key in ("status", "is", "has") else term.value))
    return term


def _example(key: str) -> str:
    return {"tag": "plan", "status": "bounced", "is": "unread", "has": "attachment", "larger": "100k",
            "smaller": "1M", "before": "2026-05-14", "after": "2026-05-01",
            "label": "checked"}.get(key, "ada@example.dev")


def _normal(term: Term) -> Term:
    if term.key in ("status", "is", "has"):
        value = term.value.lower()
        return Term(term.key, "attachment" if value == "attachments" else value, term.negated, term.quoted)
    return term


def _tokens(text: str) -> list[Term | None]:
    """Terms, and None where a bare `OR` stands."""
    tokens: list[Term | None] = []
    position = 0
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        match = _TERM.match(text, position)
        assert match is not None  # the pattern matches any non-space character
        if match.end() == position:  # a lone `-` or a stray quote mark
            raise invalid(f"Cannot read the query from `{text[position:position + 20]}`.")
        position = match.end()
        if match.group(0) == "OR":
            tokens.append(None)
        elif match.group(0) != "-":
            tokens.append(_normal(_term(match)))
        else:
            raise invalid("A `-` must stand right before the term it excludes, as in `-is:bounced`.")
    return tokens


_TERM_TOO_LONG = f"A search term takes at most {MAX_TERM_CHARS} characters."


def _check_length(text: str) -> None:
    """Before any parsing: a query too long, said of its longest term when that one is the cause."""
    if len(text) <= MAX_QUERY_CHARS:
        return
    if max(len(run) for run in text.split()) > MAX_TERM_CHARS:
        raise invalid(_TERM_TOO_LONG)
    raise invalid(f"A search takes at most {MAX_QUERY_CHARS} characters; this one has {len(text)}.")


def parse(text: str) -> Query:
    """`a b OR c -d` → [[a], [b, c], [-d]]: every clause must hold, one term of a clause is enough."""
    _check_length(text)
    tokens = _tokens(text.strip())
    if len(tokens) > MAX_TERMS:
        raise invalid(f"A search takes at most {MAX_TERMS} terms.")
    clauses: Query = []
    joining = False
    for index, token in enumerate(tokens):
        if token is None:
            if not clauses or joining or index == len(tokens) - 1:
                raise invalid("`OR` needs a term on each side, as in `invoice OR receipt`.")
            joining = True
        elif joining:
            clauses[-1].append(token)
            joining = False
        else:
            clauses.append([token])
    return clauses


def uses(query: Query, key: str, value: str | None = None) -> bool:
    return any(t.key == key and (value is None or t.value == value) for clause in query for t in clause)
