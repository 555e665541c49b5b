"""Open and click tracking as the recipient sees it (issue "Engagement that really happens"; reference
domains.md §tracking, webhooks.md §6.2 `click`).

With `click_tracking` on the sending domain, every `http(s)` link of the HTML is rewritten at send to a
tracking URL served by the emulator; with `open_tracking`, a 1×1 pixel is appended. The rewritten HTML is
what is stored, so GET /emails/{id}, the outbox and the `.eml` all show the email as received. `mailto:`
links, the unsubscribe page and the `{{{RESEND_UNSUBSCRIBE_URL}}}` placeholder are left alone.

Following a link records a click and answers a redirect to the original; loading the pixel records an
open. Every click and open is an event (`email.clicked` / `email.opened`) and moves `last_event`, like
the real service, which reports each one; metrics count unique ones separately.
"""

from __future__ import annotations

import html as html_lib
import re
from typing import TYPE_CHECKING

from emulator.core.addresses import domain_of
from emulator.core.clock import iso_z
from emulator.core.events import emit
from emulator.resources.domains.service import tracking_of
from emulator.resources.emails.outcomes import event_data

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TRACK_PREFIX = "/_emulator/t"
TABLES = [
    # token → (email, original link); one `open` row per tracked email (url NULL).
    """CREATE TABLE IF NOT EXISTS email_links (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        token TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        url TEXT
    )""",
]
# An opening <a …> tag (its end is the next `>`, found with str.find: a pattern `<a\b[^>]*>` rescans
# the rest of the input for every `<a` when no `>` follows, issue 25), then its href attribute.
_ANCHOR_START = re.compile(r"<a\b", re.IGNORECASE)
_HREF = re.compile(r"""(\bhref\s*=\s*)(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)
UNTRACKED = ("/_emulator/unsubscribe/", "{{{RESEND_UNSUBSCRIBE_URL}}}")


def base_url(tx: Tx) -> str:
    settings = tx.emu.settings
    return str(tx.emu.state.get("http_url") or f"{settings.scheme}://{settings.host}:{settings.port}")


def _trackable(url: str) -> bool:
    lowered = url.strip().lower()
    return lowered.startswith(("http://", "https://")) and not any(mark in url for mark in UNTRACKED)


def _new_link(tx: Tx, email_id: str, kind: str, url: str | None) -> str:
    token = tx.new_id()
    tx.queue("INSERT INTO email_links (token, account, email_id, kind, url) VALUES (?, ?, ?, ?, ?)",
             (token, tx.account, email_id, kind, url))
    return f"{base_url(tx)}{TRACK_PREFIX}/{kind}/{token}"


def _rewrite_links(tx: Tx, email_id: str, html: str) -> str:
    def anchor(tag: str) -> str:
        def href(attr: re.Match[str]) -> str:
            quoted = attr.group(2) if attr.group(2) is not None else attr.group(3)
            url = html_lib.unescape(quoted)
            if not _trackable(url):
                return attr.group(0)
            return f'{attr.group(1)}"{html_lib.escape(_new_link(tx, email_id, "click", url))}"'

        return _HREF.sub(href, tag, count=1)

    parts, at = [], 0
    while (start := _ANCHOR_START.search(html, at)) is not None:
        end = html.find(">", start.end())
        if end < 0:  # no `>` left: no later `<a` can be a tag either
            break
        parts += [html[at:start.start()], anchor(html[start.start():end + 1])]
        at = end + 1
    return "".join([*parts, html[at:]])


def _with_pixel(tx: Tx, email_id: str, html: str) -> str:
    url = html_lib.escape(_new_link(tx, email_id, "open", None))
    pixel = f'<img src="{url}" width="1" height="1" alt="" style="display:none">'
    ends = list(_BODY_END.finditer(html))
    if not ends:
        return html + pixel
    at = ends[-1].start()
    return html[:at] + pixel + html[at:]


async def tracked_html(tx: Tx, email_id: str, sender: str, html: str | None) -> str | None:
    """The HTML as the recipient gets it from `sender`'s domain (unchanged without tracking)."""
    if not html:
        return html
    opens, clicks = await tracking_of(tx, domain_of(sender))
    if clicks:
        html = _rewrite_links(tx, email_id, html)
    if opens:
        html = _with_pixel(tx, email_id, html)
    return html


async def find_link(tx: Tx, kind: str, token: str) -> Row | None:
    """The tracking link (any account) with its email row's columns for the event payload."""
    return await tx.one("SELECT l.account AS link_account, l.url AS link_url, e.* FROM email_links l"
                        " JOIN emails e ON e.id = l.email_id AND e.account = l.account"
                        " WHERE l.token = ? AND l.kind = ?", (token, kind))


async def record_open(tx: Tx, email: Row) -> None:
    await tx.update("emails", email["id"], {"last_event": "opened"})
    await emit(tx, "email.opened", event_data(email), subject_id=email["id"])


async def record_click(tx: Tx, email: Row, link: str, ip_address: str, user_agent: str) -> None:
    click = {"ipAddress": ip_address, "link": link, "timestamp": iso_z(tx.now), "userAgent": user_agent}
    await tx.update("emails", email["id"], {"last_event": "clicked"})
    await emit(tx, "email.clicked", {**event_data(email), "click": click}, subject_id=email["id"])


async def original_link(tx: Tx, email_id: str, url: str) -> str:
    """`url` itself, or the original link behind it when it is one of the email's tracking URLs."""
    token = url.rsplit("/", 1)[-1]
    row = await tx.one("SELECT url FROM email_links WHERE account = ? AND email_id = ? AND token = ?"
                       " AND kind = 'click'", (tx.account, email_id, token))
    return str(row["url"]) if row else url
