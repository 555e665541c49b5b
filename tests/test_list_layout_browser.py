"""Message lists in a real Chromium at every width from 360 to 2560 px: the subject stays readable (at least
20 characters on screen) in the outbox, the received list and an inbox's threads; other columns give way."""

from __future__ import annotations

import base64

import httpx
import pytest
from playwright.sync_api import Browser, Page

from emulator.testing import EmulatorServer
from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
WIDTHS = range(360, 2561, 40)
MAILS = 25
SUBJECT = "Your quarterly statement for account {n} is ready — review the attached summary before Friday"

# Characters of each row's subject wholly inside every box that clips it (its own box, the cell, the
# screen), minus one for the ellipsis drawn over the last of them. The lowest over the rows is returned.
VISIBLE_CHARACTERS = """(selector) => {
  const screen = document.documentElement.clientWidth;
  const counts = [];
  for (const subject of document.querySelectorAll(selector)) {
    if (!subject.getClientRects().length) return {error: "a subject is not displayed"};
    let left = 0, right = screen, top = -Infinity, bottom = Infinity;
    for (let el = subject; el && el.tagName !== "TABLE"; el = el.parentElement) {
      const style = getComputedStyle(el);
      if (style.overflowX === "visible" || style.display === "inline") continue;  // inline boxes clip nothing
      const box = el.getBoundingClientRect();
      left = Math.max(left, box.left + el.clientLeft);
      right = Math.min(right, box.left + el.clientLeft + el.clientWidth);
      top = Math.max(top, box.top + el.clientTop);
      bottom = Math.min(bottom, box.top + el.clientTop + el.clientHeight);
    }
    const walker = document.createTreeWalker(subject, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let seen = 0;
    for (let node = walker.nextNode(); node && seen < 80; node = walker.nextNode()) {
      for (let i = 0; i < node.length && seen < 80; i++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const box = Array.from(range.getClientRects()).find(r => r.width > 0);
        if (box && box.left >= left - .5 && box.right <= right + .5 && box.top >= top - .5 &&
            box.bottom <= bottom + .5) seen++;
      }
    }
    const style = getComputedStyle(subject);
    const ellipsis = style.textOverflow === "ellipsis" && style.display !== "inline" &&
      subject.scrollWidth > subject.clientWidth;
    counts.push(seen - (ellipsis ? 1 : 0));
  }
  return {count: counts.length, fewest: Math.min(...counts),
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
}"""


def populate(api: httpx.Client) -> str:
    """25 sent (tags, a file, cc, some scheduled), 25 received and 25 inbox threads, all long-titled."""
    attachment = [{"filename": "statement-2026-q2.pdf", "content": base64.b64encode(b"%PDF-1.4").decode()}]
    for n in range(MAILS):
        body: dict[str, object] = {
            "from": "Northwind Customer Accounts Department <statements@accounts.northwind-traders.dev>",
            "to": ["Margaret Hamilton-Lovelace <margaret.hamilton@example-enterprise.dev>",
                   "grace.hopper@example-enterprise.dev"], "cc": ["audit-team@example-enterprise.dev"],
            "subject": SUBJECT.format(n=n), "html": "<p>Statement</p>", "attachments": attachment,
            "tags": [{"name": "category", "value": "quarterly_statement"},
                     {"name": "tenant", "value": f"t{n}"}]}
        if n % 8 == 0:
            body["scheduled_at"] = "2026-06-01T09:00:00Z"
        assert api.post("/emails", json=body).status_code == 200
    domain = api.get("/_emulator/inbound/address").json()["domain"]
    domain_created = api.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}})
    assert domain_created.status_code == 201, domain_created.text
    inbox = api.post("/inboxes", json={"email_address": ADDRESS, "name": "Support"}).json()
    label = api.post(f"/inboxes/{inbox['id']}/labels",
                     json={"name": "Escalated to billing", "color": "crimson"})
    for n in range(MAILS):
        received = api.post("/_emulator/inbound", json={
            "from": "Northwind Customer Accounts Department <statements@northwind-traders.dev>",
            "to": [f"support@{domain}"], "subject": SUBJECT.format(n=n), "text": "Statement",
            "attachments": [{"filename": "a.pdf", "content": base64.b64encode(b"%PDF").decode()}]})
        assert received.status_code == 200, received.text
        raw = raw_mail(SUBJECT.format(n=n), "Statement", f"<s{n}@example.org>",
                       sender="Northwind Customer Accounts Department <statements@northwind-traders.dev>",
                       attachment=("a.pdf", b"%PDF"))
        assert api.post("/_emulator/inbound", content=raw,
                        headers={"content-type": "message/rfc822"}).status_code == 200
    threads = api.get(f"/inboxes/{inbox['id']}/threads").json()["data"]
    for thread in threads[::3]:
        api.patch(f"/inboxes/{inbox['id']}/threads/{thread['id']}", json={"label_id": label.json()["id"]})
    return str(inbox["id"])


def narrowest(page: Page, selector: str) -> list[tuple[int, int, int]]:
    """(width, fewest characters visible, page overflow) at every width, resizing one page."""
    found = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        result = page.evaluate(VISIBLE_CHARACTERS, selector)
        assert "error" not in result and result["count"] >= MAILS, (width, result)
        found.append((width, result["fewest"], result["overflow"]))
    return found


@pytest.mark.parametrize("where", ["outbox", "received", "inbox"])
def test_every_width_shows_at_least_20_characters_of_each_subject(browser: Browser, server: EmulatorServer,
                                                                  api: httpx.Client, where: str) -> None:
    inbox = populate(api)
    url = {"outbox": f"{UI}/", "received": f"{UI}/received", "inbox": f"{UI}/inboxes/{inbox}"}[where]
    selector = "#threads tr.row .c-subject a" if where == "inbox" else "#rows tr.row a.subject"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(f"{server.url}{url}")
        measured = narrowest(page, selector)
    finally:
        page.close()
    unreadable = [(width, fewest) for width, fewest, _ in measured if fewest < 20]
    assert not unreadable, f"under 20 characters of a subject visible at (width, characters): {unreadable}"
    assert [(width, over) for width, _, over in measured if over > 0] == []
