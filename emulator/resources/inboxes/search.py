"""Thread search (reference/inboxes.md §3.6).

`folders`, `labels` and `read` select threads; `query`, `from`/`to`/`cc`/`bcc`, `has_attachment` and
the dates must all match one email of the thread. Query words match case-insensitively in the
subject, body, sender, recipients and attachment names; `"a phrase"` matches as written; `-word`
excludes. Unlike Resend's index, the emulator's search never lags.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.api.ops import ApiRequest
from emulator.core import errors
from emulator.core.clock import from_db
from emulator.core.errors import ApiError
from emulator.core.pages import BAD_CURSOR_TEXT, INBOX_DOCS, list_body
from emulator.resources.inboxes import filters
from emulator.resources.inboxes.store import loads, require_inbox, thread_messages
from emulator.resources.inboxes.threads import list_item, thread_where

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

SEARCH_WINDOW = 10_000  # [docs] only the 10,000 newest matching threads are searched
_TERM = re.compile(r'(-?)"([^"]*)"|(-?)(\S+)')
FRAGMENT_RADIUS = 40


class Criteria(NamedTuple):
    include: list[str]
    exclude: list[str]
    people: dict[str, list[str]]
    has_attachment: bool | None
    dates: filters.DateRange

    @property
    def per_email(self) -> bool:
        return bool(self.include or self.exclude or self.people or self.has_attachment is not None
                    or self.dates.start or self.dates.end)


def terms(text: str | None) -> tuple[list[str], list[str]]:
    include: list[str] = []
    exclude: list[str] = []
    for neg_phrase, phrase, neg_word, word in _TERM.findall(text or ""):
        term = (phrase or word).lower()
        if term:
            (exclude if (neg_phrase or neg_word) else include).append(term)
    return include, exclude


def criteria(query: Any) -> Criteria:
    include, exclude = terms(filters.text_query(query))
    people = {name: found for name in ("from", "to", "cc", "bcc")
              if (found := filters.address_filter(query, name))}
    return Criteria(include, exclude, people, filters.flag(query, "has_attachment"), filters.dates(query))


def fields_of(message: Row) -> dict[str, str]:
    return {"subject": message["subject"] or "", "body": message["text"] or message["html"] or "",
            "from": message["from_addr"], "to": ", ".join(loads(message["to_addrs"])),
            "cc": ", ".join(loads(message["cc"])), "bcc": ", ".join(loads(message["bcc"])),
            "attachments": ", ".join(a["filename"] or "" for a in loads(message["attachments"]))}


def _people_match(message: Row, people: dict[str, list[str]]) -> bool:
    columns = {"from": [message["from_addr"]], "to": loads(message["to_addrs"]), "cc": loads(message["cc"]),
               "bcc": loads(message["bcc"])}
    return all(any(value in address.lower() for value in wanted for address in columns[name])
               for name, wanted in people.items())


def matches(message: Row, rules: Criteria) -> bool:
    haystack = " ".join(fields_of(message).values()).lower()
    if not all(term in haystack for term in rules.include) or any(term in haystack for term in rules.exclude):
        return False
    if not _people_match(message, rules.people):
        return False
    if rules.has_attachment is not None and bool(loads(message["attachments"])) != rules.has_attachment:
        return False
    at = from_db(message["received_at"])
    return not ((rules.dates.start and at < rules.dates.start) or (rules.dates.end and at > rules.dates.end))


def in_folders(thread: Row, message: Row, folders: list[str]) -> bool:
    """[sdk] With an email filter the matching email itself must be in a chosen folder: an answered
    thread is under `sent` only through the emails the inbox sent."""
    return thread["folder"] in folders or ("sent" in folders and message["direction"] == "outbound")


def highlights(message: Row, words: list[str]) -> dict[str, list[str]]:
    """Fragments around each match, matches wrapped in `**`; `{}` without query words [docs]."""
    if not words:
        return {}
    pattern = re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)), re.I)
    found: dict[str, list[str]] = {}
    for key, text in fields_of(message).items():
        hit = pattern.search(text)
        if hit is None:
            continue
        start, end = max(0, hit.start() - FRAGMENT_RADIUS), min(len(text), hit.end() + FRAGMENT_RADIUS)
        found[key] = [pattern.sub(lambda m: f"**{m.group(0)}**", text[start:end])]
    return found


def best(candidates: list[Row], words: list[str]) -> Row:
    """The most relevant match when there are query words (most hits, newest on a tie), else newest."""
    def score(message: Row) -> int:
        haystack = " ".join(fields_of(message).values()).lower()
        return sum(haystack.count(word) for word in words)
    return max(reversed(candidates), key=score) if words else candidates[-1]


async def search_threads(tx: Tx, inbox_id: str, query: Any) -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    rules = criteria(query)
    labels = await filters.labels(tx, inbox, query)
    folders = filters.folders(query, labels is not None, names=("folders",))
    page = filters.page(query)
    where, params = thread_where(inbox, folders, labels, filters.flag(query, "read"))
    threads = await tx.all(f"SELECT * FROM inbox_threads WHERE {' AND '.join(where)} ORDER BY tick DESC",
                           params)
    found: list[tuple[Row, Row | None]] = []
    for thread in threads:
        messages = await thread_messages(tx, thread["id"])
        if rules.per_email:
            hits = [m for m in messages if in_folders(thread, m, folders) and matches(m, rules)]
        else:
            hits = messages
        if hits:
            found.append((thread, best(hits, rules.include)))
        if len(found) == SEARCH_WINDOW:
            break
    window = _window(found, page.after, page.before, page.limit or 20)
    return list_body([await _item(tx, thread, match, rules) for thread, match in window[0]], window[1])


def _window(found: list[tuple[Row, Row | None]], after: str | None, before: str | None,
            limit: int) -> tuple[list[tuple[Row, Row | None]], bool]:
    ids = [thread["id"] for thread, _ in found]
    cursor = after or before
    if cursor is not None and cursor not in ids:
        raise ApiError(errors.NOT_FOUND, f"{BAD_CURSOR_TEXT} {INBOX_DOCS}")
    if after is not None:
        rest = found[ids.index(after) + 1:]
        return rest[:limit], len(rest) > limit
    if before is not None:
        head = found[:ids.index(before)]
        return head[-limit:], len(head) > limit
    return found[:limit], len(found) > limit


async def _item(tx: Tx, thread: Row, match: Row | None, rules: Criteria) -> dict[str, Any]:
    item = await list_item(tx, thread)
    item["matched_email_id"] = match["id"] if match is not None else None
    item["highlights"] = highlights(match, rules.include) if match is not None else {}
    return item


async def http_search(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await search_threads(tx, req.params["inbox_id"], req.query)
