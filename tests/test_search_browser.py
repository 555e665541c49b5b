"""The search language in a real Chromium, desktop (1280×800), tablet (768×1024) and phone (390×844): one
language for the outbox, received mail and inbox threads; negation, OR, match counts, and an inline
sentence for a wrong query. Also: an inbox thread is read once opened."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from emulator.testing import EmulatorServer
from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.ui_helpers import BROWSER
from tests.ui_helpers import send_titled as send

pytestmark = BROWSER
UI = "/_emulator/ui"


@pytest.fixture
def page(three_screen_page: Page, api: httpx.Client) -> Page:
    return three_screen_page


def search(page: Page, text: str) -> None:
    page.locator("#search").fill(text)
    with page.expect_navigation():
        page.locator("#search").press("Enter")


def subjects(page: Page) -> list[str]:
    return page.locator("#rows tr.row .subject").all_inner_texts()


def test_outbox_search_counts_negates_ors_and_explains_mistakes(page: Page, server: EmulatorServer,
                                                                api: httpx.Client) -> None:
    send(api, "Invoice 7", tags=[{"name": "plan", "value": "pro"}])
    send(api, "Export ready", cc=["grace@hopper.dev"])
    send(api, "Weekly digest")
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#count")).to_have_text("3 messages")
    search(page, "invoice OR export")
    expect(page.locator("#count")).to_have_text("2 matches")
    assert subjects(page) == ["Export ready", "Invoice 7"]
    search(page, "-tag:plan -cc:grace")
    assert subjects(page) == ["Weekly digest"]
    expect(page.locator("#count")).to_have_text("1 match")
    search(page, 'subject:"weekly digest" is:unread')
    assert subjects(page) == ["Weekly digest"]
    for wrong, sentence in [("foo:bar", "Unknown operator `foo:`"),
                            ("source:smtp", "Unknown operator `source:`"),
                            ("invoice OR", "`OR` needs a term on each side"),
                            ('subject:"open', "A quote is not closed")]:
        search(page, wrong)
        error = page.locator("#search-error")
        expect(error).to_contain_text(sentence)
        box, field = error.bounding_box(), page.locator("#search").bounding_box()
        assert box and field and box["y"] > field["y"] and box["y"] < 844  # under the box, on screen
        expect(page.locator("#rows tr.row")).to_have_count(0)
        expect(page.locator("#delete-results")).to_have_count(0)  # nothing to delete for a wrong query


def test_received_mail_takes_the_same_language(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    domain = api.get("/_emulator/inbound/address").json()["domain"]
    for sender, subject in [("jane@customer.io", "Order question"), ("bob@shop.io", "Refund please"),
                            ("bob@shop.io", "Thanks")]:
        reply = api.post("/_emulator/inbound", json={"from": sender, "to": f"help@{domain}",
                                                     "subject": subject, "text": "hello"})
        assert reply.status_code == 200, reply.text
    page.goto(f"{server.url}{UI}/received")
    expect(page.locator("#unread-count")).to_have_text("3 unread")
    search(page, "from:bob -subject:thanks")
    expect(page.locator("#count")).to_have_text("1 match")
    assert subjects(page) == ["Refund please"]
    search(page, "status:bounced")
    expect(page.locator("#search-error")).to_contain_text("applies to sent mail only")


@pytest.fixture
def inbox(api: httpx.Client) -> dict[str, str]:
    domain = api.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}})
    assert domain.status_code == 201, domain.text
    made = api.post("/inboxes", json={"email_address": ADDRESS, "name": "Support"}).json()
    mails = [("Refund for order 1041", "<a@example.org>"), ("Invoice copy", "<b@example.org>")]
    for subject, message_id in mails:
        reply = api.post("/_emulator/inbound", content=raw_mail(subject, "Please help", message_id),
                         headers={"content-type": "message/rfc822"})
        assert reply.status_code == 200, reply.text
    return made  # type: ignore[no-any-return]


def test_inbox_threads_search_and_read_when_opened(page: Page, server: EmulatorServer, api: httpx.Client,
                                                   inbox: dict[str, str]) -> None:
    page.goto(f"{server.url}{UI}/inboxes/{inbox['id']}")
    expect(page.locator("#live")).to_have_class("live on")
    expect(page.locator("#threads tr.unread")).to_have_count(2)
    search(page, "subject:refund OR subject:nothing")
    expect(page.locator("#thread-matches")).to_have_text("1 match")
    row = page.locator("#threads tr.row")
    expect(row).to_have_count(1)
    row.get_by_role("link").click()
    expect(page.locator("#read-state")).to_have_text("read")
    page.goto(f"{server.url}{UI}/inboxes/{inbox['id']}?q=is:unread")
    expect(page.locator("#threads tr.row")).to_have_count(1)
    expect(page.locator("#threads tr.row")).to_contain_text("Invoice copy")
    threads = api.get(f"/inboxes/{inbox['id']}/threads").json()["data"]
    read = {t["subject"]: t["read"] for t in threads}
    assert read == {"Refund for order 1041": True, "Invoice copy": False}
    search(page, "tag:vip")
    expect(page.locator("#search-error")).to_contain_text("applies to sent mail only")


def test_outbox_search_box_finds_substrings_in_any_language_folded(page: Page, server: EmulatorServer,
                                                                  api: httpx.Client) -> None:
    """Issue 39: inside words, Japanese, file names, accents and Greek case, has:inline, addressed:."""
    csv = {"filename": "report.csv", "content": "YSxiCjEsMgo="}
    logo = {"filename": "logo.png", "content": "iVBORw==", "content_id": "logo"}
    send(api, "Welcome aboard")
    send(api, "ご注文ありがとうございます")
    send(api, "Monthly figures", attachments=[csv])
    send(api, "Hej Søren", reply_to=["desk@answers.example"])
    send(api, "Καλημέρα σοφία", attachments=[logo])
    page.goto(f"{server.url}{UI}/")
    for query, expected in [("elcome", ["Welcome aboard"]), ("注文", ["ご注文ありがとうございます"]),
                            ("report.csv", ["Monthly figures"]), ("soren", ["Hej Søren"]),
                            ("ΣΟΦΙΑ", ["Καλημέρα σοφία"]), ("has:inline", ["Καλημέρα σοφία"]),
                            ("addressed:answers.example", ["Hej Søren"])]:
        search(page, query)
        expect(page.locator("#count")).to_have_text("1 match")
        assert subjects(page) == expected, query
