"""Browsing an account's contacts for the UI: search by email or name, filter by segment, topic or
unsubscribed state, newest first, in keyset pages (seek by `seq`, so a page costs the same at the
millionth contact as at the first). The search is a substring of the email or either name, case and
accents set aside by Unicode's rules (core/fold.py, as the mail lists fold: `soren` finds Søren), in
linear time (core/substring.py); a search's statements then run off the loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.core import substring

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

PAGE = 50


@dataclass(frozen=True)
class Filters:
    text: str = ""  # part of the email, first or last name
    segment_id: str = ""
    topic_id: str = ""  # contacts subscribed to it (their choice, else the topic's default)
    unsubscribed: str = ""  # "yes", "no" or "" (either)
    before: int | None = None  # the seq the page starts below


def _where(tx: Tx, filters: Filters) -> tuple[list[str], list[Any]]:
    clauses: list[str] = ["c.account = ?"]
    params: list[Any] = [tx.account]
    if filters.before is not None:
        clauses.append("c.seq < ?")
        params.append(filters.before)
    if filters.text:
        clauses.append(substring.sql(("c.email_key", "c.first_name", "c.last_name")))
        params.append(substring.needle(filters.text))
        tx.scan_off_loop()
    if filters.segment_id:
        clauses.append("EXISTS (SELECT 1 FROM segment_contacts sc WHERE sc.account = c.account"
                       " AND sc.segment_id = ? AND sc.contact_id = c.id)")
        params.append(filters.segment_id)
    if filters.topic_id:
        clauses.append("(SELECT COALESCE(ct.subscription, t.default_subscription) FROM topics t"
                       " LEFT JOIN contact_topics ct ON ct.account = t.account AND ct.topic_id = t.id"
                       " AND ct.contact_id = c.id WHERE t.account = c.account AND t.id = ?) = 'opt_in'")
        params.append(filters.topic_id)
    if filters.unsubscribed in ("yes", "no"):
        clauses.append("c.unsubscribed = ?")
        params.append(int(filters.unsubscribed == "yes"))
    return clauses, params


async def browse(tx: Tx, filters: Filters) -> tuple[list[Row], int | None]:
    """A page of contact rows and the cursor of the next (older) page, None on the last."""
    clauses, params = _where(tx, filters)
    rows = await tx.all(f"SELECT c.seq, c.id, c.email, c.first_name, c.last_name, c.unsubscribed,"
                        f" c.created_at FROM contacts c WHERE {' AND '.join(clauses)}"
                        f" ORDER BY c.seq DESC LIMIT {PAGE + 1}", params)
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    return rows, (rows[-1]["seq"] if more else None)


async def choices(tx: Tx) -> dict[str, list[Row]]:
    """The account's segments and topics (id, name), for the filters."""
    return {
        "segments": await tx.all("SELECT id, name FROM segments WHERE account = ? ORDER BY seq DESC",
                                 (tx.account,)),
        "topics": await tx.all("SELECT id, name FROM topics WHERE account = ? ORDER BY seq DESC",
                               (tx.account,)),
    }
