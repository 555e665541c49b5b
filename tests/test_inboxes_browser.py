"""The Inboxes tab in a real Chromium: inboxes with counts, threads by folder, a thread as a conversation
(oldest first, HTML only inside the sandboxed frame), drafts and labels."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from emulator.testing import EmulatorServer
from emulator.web.frame import SANDBOX
from tests.conftest import AUTH
from tests.inboxes_helpers import ADDRESS, DOMAIN, raw_mail
from tests.ui_helpers import BROWSER, CHROMIUM, CHROMIUM_ARGS, running_server

pytestmark = BROWSER
UI = "/_emulator/ui"
HOSTILE = ('<p id="content">Refund please</p><img src=x onerror="parent.document.body.dataset.pwned=1">'
           '<script>parent.document.body.dataset.pwned=2</script>')


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser.new_page()
        browser.close()


def inject(api: httpx.Client, raw: bytes) -> str:
    reply = api.post("/_emulator/inbound", content=raw, headers={"content-type": "message/rfc822"})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"][0]["id"])


def populate(api: httpx.Client) -> dict[str, str]:
    domain = api.post("/domains", json={"name": DOMAIN, "capabilities": {"receiving": "enabled"}})
    assert domain.status_code == 201, domain.text
    inbox = api.post("/inboxes", json={"email_address": ADDRESS, "name": "Support"}).json()
    first = inject(api, raw_mail("Refund for order 1041", "Refund please", "<a@example.org>", html=HOSTILE))
    inject(api, raw_mail("Re: Refund for order 1041", "Any news?", "<b@example.org>",
                         in_reply_to="<a@example.org>"))
    inject(api, raw_mail("Spam offer", "Buy now", "<s@example.org>"))
    listed = api.get(f"/inboxes/{inbox['id']}/threads").json()["data"]
    threads = {t["subject"]: t["id"] for t in listed}
    api.patch(f"/inboxes/{inbox['id']}/threads/{threads['Spam offer']}", json={"folder": "spam"})
    label = api.post(f"/inboxes/{inbox['id']}/labels", json={"name": "Urgent", "color": "crimson"}).json()
    refund = threads["Refund for order 1041"]
    api.patch(f"/inboxes/{inbox['id']}/threads/{refund}", json={"label_id": label["id"]})
    sent = api.post(f"/inboxes/{inbox['id']}/threads/{refund}/emails/{first}/reply",
                    json={"html": "<p id='answer'>Refund issued.</p>"})
    assert sent.status_code == 200, sent.text
    api.post(f"/inboxes/{inbox['id']}/drafts", json={"to": "grace@example.org", "subject": "Follow-up",
                                                     "text": "Checking in on your order."})
    return {"inbox": inbox["id"], "refund": refund, "spam": threads["Spam offer"]}


def test_inboxes_tab_shows_inboxes_folders_drafts_labels_and_a_conversation(server: EmulatorServer,
                                                                           page: Page) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        ids = populate(api)
    page.goto(f"{server.url}{UI}/")
    page.click("nav.sections >> text=Inboxes")
    row = page.locator(f"#inboxes tr[data-id='{ids['inbox']}']")
    expect(row.locator(".unread")).to_have_text("1")
    expect(row.locator(".drafts")).to_have_text("1")
    row.locator("a").click()

    expect(page.locator("#threads tr.row")).to_have_count(1)
    thread_row = page.locator(f"#threads tr[data-id='{ids['refund']}']")
    expect(thread_row.locator(".count")).to_have_text("3")
    expect(thread_row.locator(".tag")).to_have_text("Urgent")
    expect(page.locator("#drafts tr.row .c-subject")).to_have_text("Follow-up")
    expect(page.locator("#labels .tag")).to_have_text("Urgent")
    page.click(".folders >> text=Spam")
    expect(page.locator("#threads tr.row")).to_have_count(1)
    expect(page.locator(f"#threads tr[data-id='{ids['spam']}']")).to_be_visible()
    page.click(".folders >> text=Inbox")

    page.click(f"#threads tr[data-id='{ids['refund']}'] a")
    messages = page.locator("#conversation > li")
    expect(messages).to_have_count(3)
    assert [messages.nth(n).get_attribute("data-direction") for n in range(3)] == \
        ["inbound", "inbound", "outbound"]
    expect(messages.nth(1).locator("pre.text-part")).to_contain_text("Any news?")
    first_frame = messages.nth(0).frame_locator("iframe")
    expect(first_frame.locator("#content")).to_have_text("Refund please")
    expect(messages.nth(2).frame_locator("iframe").locator("#answer")).to_have_text("Refund issued.")
    # The outbox preview's sandbox: scripts for our nonce'd measuring script only (the CSP keeps the
    # email's own <script> and onerror from running: data-pwned stays unset), never same-origin.
    assert messages.nth(0).locator("iframe").get_attribute("sandbox") == SANDBOX
    assert page.locator("body").get_attribute("data-pwned") is None


def test_unknown_inbox_and_thread_pages_are_404(server: EmulatorServer, page: Page) -> None:
    missing = page.goto(f"{server.url}{UI}/inboxes/7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34")
    assert missing is not None and missing.status == 404
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        ids = populate(api)
    gone = page.goto(f"{server.url}{UI}/inboxes/{ids['inbox']}/threads/7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34")
    assert gone is not None and gone.status == 404


def test_an_open_inbox_page_shows_new_mail_live(server: EmulatorServer, page: Page) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        ids = populate(api)
        page.goto(f"{server.url}{UI}/inboxes/{ids['inbox']}")
        expect(page.locator("#live")).to_have_text("live")
        expect(page.locator("#threads tr.row")).to_have_count(1)
        inject(api, raw_mail("Where is my parcel?", "Tracking number please", "<p@example.org>"))
        expect(page.locator("#threads tr.row")).to_have_count(2)
        newest = page.locator("#threads tr.row").first
        expect(newest.locator(".c-subject")).to_contain_text("Where is my parcel?")
