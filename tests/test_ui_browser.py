"""The outbox UI in a real browser: Debian's Chromium driven by Playwright, against a real server."""

from __future__ import annotations

import base64
import email
import os
import re
from collections.abc import Iterator
from email import policy
from pathlib import Path
from typing import Literal

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.ui_helpers import BROWSER, Tracker

pytestmark = BROWSER
UI = "/_emulator/ui"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
MOBILE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def page(browser: Browser, api: httpx.Client) -> Iterator[Page]:
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    opened = context.new_page()
    yield opened
    context.close()


def send(api: httpx.Client, **fields: object) -> str:
    body: dict[str, object] = {"from": "Acme <orders@resend.dev>", "to": ["delivered@resend.dev"],
                               "subject": "Hello", "text": "Hello there."}
    body.update(fields)
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def attachment(filename: str, content: bytes, content_id: str | None = None) -> dict[str, str]:
    part = {"filename": filename, "content": base64.b64encode(content).decode()}
    return {**part, "content_id": content_id} if content_id else part


def open_outbox(page: Page, server: EmulatorServer, query: str = "") -> None:
    page.goto(f"{server.url}{UI}/{query}")
    expect(page.locator("#live")).to_have_class("live on")


def test_new_email_appears_live_and_opens_with_parts_and_eml(page: Page, server: EmulatorServer,
                                                             api: httpx.Client) -> None:
    open_outbox(page, server)
    expect(page.locator("#rows tr.none")).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    email_id = send(
        api, subject="Your receipt #1042", text="Thanks for your order #1042.",
        html="<h1>Thanks</h1><p>Order #1042</p><img src=\"cid:logo\" alt=logo>",
        tags=[{"name": "category", "value": "receipt"}],
        attachments=[attachment("invoice.pdf", b"%PDF-1.4 fake"), attachment("logo.png", PNG, "logo")],
    )
    row = page.locator(f'#rows tr.row[data-id="{email_id}"]')
    expect(row).to_be_visible()
    expect(row).to_contain_text("Your receipt #1042")
    expect(row).to_contain_text("category:receipt")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened

    page.keyboard.press("j")
    expect(row).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Enter")
    expect(page.locator("#subject")).to_have_text("Your receipt #1042")
    expect(page.locator("#attachments")).to_contain_text("invoice.pdf")
    expect(page.locator("#attachments")).to_contain_text("logo.png")
    inline = page.frame_locator("#preview").locator("img")
    expect(inline).to_have_js_property("naturalWidth", 1)  # cid: image loaded from the attachment

    page.locator("#tab-text").click()
    expect(page.locator("#text-part")).to_have_text("Thanks for your order #1042.")

    with page.expect_download() as download_info:
        page.locator("#download-eml").click()
    download = download_info.value
    assert download.suggested_filename == f"{email_id}.eml"
    message = email.message_from_bytes(Path(download.path()).read_bytes(), policy=policy.default)
    assert message["Subject"] == "Your receipt #1042"
    names = [part.get_filename() for part in message.iter_attachments()]
    assert "invoice.pdf" in names


def test_status_changes_reach_the_open_list_and_message(page: Page, server: EmulatorServer,
                                                        api: httpx.Client) -> None:
    bounce_id = send(api, subject="Will bounce", to=["bounced@resend.dev"])
    open_outbox(page, server)
    row = page.locator(f'#rows tr.row[data-id="{bounce_id}"]')
    expect(row.locator(".badge")).to_have_text("sent")
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    expect(row.locator(".badge")).to_have_text("bounced")

    email_id = send(api, subject="Will be delivered")
    page.locator(f'#rows tr.row[data-id="{email_id}"] .subject').click()
    expect(page.locator("#status")).to_have_text("sent")
    page.locator("#tab-activity").click()
    expect(page.locator("#timeline .event-type")).to_have_text(["email.sent"])
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    expect(page.locator("#status")).to_have_text("delivered")
    expect(page.locator("#timeline .event-type")).to_have_text(["email.sent", "email.delivered"])

    page.keyboard.press("Escape")
    expect(page.locator(f'#rows tr.row[data-id="{email_id}"] .badge')).to_have_text("delivered")


def test_api_cancel_reaches_the_open_list(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    email_id = send(api, subject="Later", scheduled_at="in 1 hour")
    open_outbox(page, server)
    badge = page.locator(f'#rows tr.row[data-id="{email_id}"] .badge')
    expect(badge).to_have_text("scheduled")
    assert api.post(f"/emails/{email_id}/cancel").status_code == 200
    expect(badge).to_have_text("canceled")


def test_width_toggle_and_tabs_by_keyboard(page: Page, server: EmulatorServer, api: httpx.Client) -> None:
    email_id = send(api, html="<p id=wide>Hello</p>", text="Hello")
    page.goto(f"{server.url}{UI}/messages/{email_id}")
    preview = page.locator("#preview")
    assert (preview.bounding_box() or {"width": 0})["width"] > 800
    page.locator('button[data-width="mobile"]').click()
    expect(preview).to_have_js_property("offsetWidth", 375)
    page.keyboard.press("2")
    expect(page.locator("#panel-text")).to_be_visible()
    expect(page.locator("#panel-html")).to_be_hidden()
    page.locator("#tab-text").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#panel-headers")).to_be_visible()
    expect(page.locator("#panel-headers")).to_contain_text("Message-ID")


HOSTILE_HTML = """<html><head><title>x</title></head><body>
<p id="content">Hostile message</p>
<script>document.body.setAttribute('data-pwned', 'script'); top.__pwned = 'script';</script>
<img src="data:," onerror="document.body.setAttribute('data-pwned', 'onerror'); top.__pwned = 'img'">
<img id="remote" src="{tracker}/tracker.png">
<a id="escape" href="/_emulator/ui/webhooks" target="_top">click me</a>
</body></html>"""


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    remote = Tracker()
    yield remote
    remote.close()


def test_hostile_html_cannot_script_or_navigate_the_ui(page: Page, server: EmulatorServer,
                                                       api: httpx.Client, tracker: Tracker) -> None:
    email_id = send(api, subject='<i id="markup">Pwned</i> & "quoted"',
                    html=HOSTILE_HTML.replace("{tracker}", tracker.url))

    open_outbox(page, server)
    expect(page.locator("#rows .subject")).to_have_text('<i id="markup">Pwned</i> & "quoted"')
    assert page.locator("#markup").count() == 0  # the subject's markup is text, not an element

    message_url = f"{server.url}{UI}/messages/{email_id}"
    page.goto(message_url)
    expect(page.locator("#subject")).to_have_text('<i id="markup">Pwned</i> & "quoted"')
    assert page.locator("#markup").count() == 0
    frame = page.frame_locator("#preview")
    expect(frame.locator("#content")).to_have_text("Hostile message")
    expect(frame.locator("body")).not_to_have_attribute("data-pwned", "script")
    expect(frame.locator("body")).not_to_have_attribute("data-pwned", "onerror")

    # A `target=_top` link opens in a new tab (the frame's script retargets it, issue 39): the UI stays.
    with page.context.expect_page() as opened:
        frame.locator("#escape").click()
    opened.value.close()
    assert page.url == message_url
    assert page.evaluate("window.top.location.href") == message_url
    assert page.evaluate("window.__pwned") is None
    assert frame.locator("body").get_attribute("data-pwned") is None
    assert tracker.hits == []  # the remote image stays blocked

    page.locator("#allow-remote").click()
    expect(page.frame_locator("#preview").locator("#content")).to_be_visible()
    page.wait_for_function("document.querySelector('#preview') !== null")
    expect(page.frame_locator("#preview").locator("#remote")).to_have_js_property("complete", True)
    assert tracker.hits == ["/tracker.png"]  # loaded only once the user allowed it
    assert page.evaluate("window.__pwned") is None


def test_frame_opened_directly_still_cannot_run_script(page: Page, server: EmulatorServer,
                                                       api: httpx.Client) -> None:
    email_id = send(api, html=HOSTILE_HTML.replace("{tracker}", "http://127.0.0.1:9"))
    page.goto(f"{server.url}{UI}/messages/{email_id}/frame")
    expect(page.locator("#content")).to_have_text("Hostile message")
    assert page.locator("body").get_attribute("data-pwned") is None


def _bulk(api: httpx.Client, count: int) -> None:
    """`count` emails through the batch endpoint (100 a request): every 10th bounces, every 7th is
    tagged `plan:pro`, subjects carry the number."""
    batch: list[dict[str, object]] = []
    for n in range(count):
        to = "bounced@resend.dev" if n % 10 == 3 else f"delivered+user{n}@resend.dev"
        item: dict[str, object] = {"from": "Acme <news@resend.dev>", "to": [to],
                                   "subject": f"Weekly digest #{n:04d}", "text": f"Issue {n}"}
        if n % 7 == 0:
            item["tags"] = [{"name": "plan", "value": "pro"}]
        batch.append(item)
        if len(batch) == 100:
            assert api.post("/emails/batch", json=batch).status_code == 200
            batch = []
    if batch:
        assert api.post("/emails/batch", json=batch).status_code == 200
    # Batch emails start queued: send them all, then let the outcomes (a few seconds later) happen.
    assert api.post("/_emulator/flush").status_code == 200
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200


def _subjects(page: Page) -> list[str]:
    return page.locator("#rows tr.row .subject").all_inner_texts()


def test_search_and_status_filter_with_a_thousand_emails(page: Page, server: EmulatorServer,
                                                         api: httpx.Client) -> None:
    _bulk(api, 1000)
    open_outbox(page, server)
    expect(page.locator("#total")).to_have_text("1,000")
    assert len(_subjects(page)) == 50

    page.locator("#search").fill("user77@")
    page.locator("#search").press("Enter")
    expect(page.locator("#rows tr.row")).to_have_count(1)
    assert _subjects(page) == ["Weekly digest #0077"]

    page.locator("#search").fill("digest #09")
    page.locator("#search").press("Enter")
    expect(page.locator("#rows tr.row")).to_have_count(50)
    assert _subjects(page)[0] == "Weekly digest #0999" and _subjects(page)[-1] == "Weekly digest #0950"
    page.locator("#older").click()
    expect(page.locator("#rows tr.row")).to_have_count(50)
    assert _subjects(page)[0] == "Weekly digest #0949" and _subjects(page)[-1] == "Weekly digest #0900"

    page.goto(f"{server.url}{UI}/")
    page.locator("#status-filter").select_option("bounced")
    expect(page).to_have_url(f"{server.url}{UI}/?q=&status=bounced&tag=")
    expect(page.locator("#rows tr.row")).to_have_count(50)
    statuses = page.locator("#rows tr.row .badge").all_text_contents()
    assert set(statuses) == {"bounced"}
    expected = [f"Weekly digest #{n:04d}" for n in range(999, -1, -1) if n % 10 == 3]
    assert _subjects(page) == expected[:50]
    page.locator("#older").click()
    expect(page.locator("#rows tr.row")).to_have_count(50)
    assert _subjects(page) == expected[50:100]

    page.goto(f"{server.url}{UI}/?status=bounced&tag=plan:pro")
    expected_tagged = [f"Weekly digest #{n:04d}" for n in range(999, -1, -1) if n % 10 == 3 and n % 7 == 0]
    expect(page.locator("#rows tr.row")).to_have_count(len(expected_tagged))
    assert _subjects(page) == expected_tagged


# `make screenshots` sets this to docs/screenshots; other runs write to a temporary folder.
SCREENSHOTS_DIR = os.environ.get("RESEND_EMULATOR_SCREENSHOTS")
RECEIPT_HTML = """<!doctype html><html><head><meta name="viewport" content="width=device-width">
<meta name="color-scheme" content="light dark">
<style>
  body { margin: 0; background: #f4f5f7; font-family: Helvetica, Arial, sans-serif; color: #1d1f23; }
  @media (prefers-color-scheme: dark) {
    body { background: #17181b; color: #e8e9ec; } .card { background: #23252a !important; }
    h1 { color: #ffffff; } p { color: #b9bcc3 !important; } td { border-bottom-color: #33363c !important; }
  }
  .card { max-width: 560px; margin: 24px auto; background: #fff; border-radius: 10px; padding: 32px; }
  h1 { font-size: 22px; margin: 16px 0 8px; } p { line-height: 1.55; color: #44474e; }
  table { width: 100%; border-collapse: collapse; margin: 20px 0; font-size: 15px; }
  td { padding: 10px 0; border-bottom: 1px solid #eceef1; } td.r { text-align: right; }
  tr.total td { font-weight: bold; border-bottom: 0; }
  a.btn { display: inline-block; background: #2f5bea; color: #fff; padding: 12px 20px; border-radius: 6px;
          text-decoration: none; font-weight: bold; }
</style></head><body><div class="card">
<img src="cid:logo" width="40" height="40" alt="Acme">
<h1>Thanks for your order, Ada!</h1>
<p>We've received order <b>#1042</b> and will let you know as soon as it ships.</p>
<table><tr><td>Mechanical keyboard</td><td class="r">$129.00</td></tr>
<tr><td>USB-C cable (2 m)</td><td class="r">$14.00</td></tr>
<tr><td>Shipping</td><td class="r">$0.00</td></tr>
<tr class="total"><td>Total</td><td class="r">$143.00</td></tr></table>
<p><a class="btn" href="https://acme.dev/orders/1042">View your order</a></p>
<p style="font-size:13px;color:#8a8f98">Acme Inc. · 1 Market Street · San Francisco</p>
</div></body></html>"""
LOGO = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAACgAAAAoCAIAAAADnC86AAAAMElEQVR42u3NMQ0AAAgDsDlCEP4fVGCChKdJ/6Z6XkQsFovFYrFYLBaLxWKxWCy+sw39FYj3IVD/AAAAAElFTkSuQmCC"
)


def _sample_mailbox(api: httpx.Client) -> str:
    sender = "Acme <orders@resend.dev>"
    send(api, **{"from": sender}, to=["bounced@resend.dev"], subject="Your weekly digest",
         text="Top stories this week.", tags=[{"name": "category", "value": "digest"}])
    send(api, **{"from": "Acme Security <security@resend.dev>"}, to=["grace@hopper.dev"],
         subject="Reset your password", text="Use this link to choose a new password.")
    receipt = send(
        api, **{"from": sender}, to=["Ada Lovelace <ada@lovelace.dev>"], cc=["billing@lovelace.dev"],
        subject="Your receipt #1042", html=RECEIPT_HTML, reply_to=["support@acme.dev"],
        text="Thanks for your order, Ada! Order #1042: $143.00.",
        tags=[{"name": "category", "value": "receipt"}, {"name": "plan", "value": "pro"}],
        attachments=[attachment("invoice-1042.pdf", b"%PDF-1.4 ..."), attachment("logo.png", LOGO, "logo")],
    )
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    send(api, **{"from": sender}, to=["linus@torvalds.dev"], subject="Welcome to Acme, Linus!",
         text="Glad to have you on board.", tags=[{"name": "category", "value": "onboarding"}])
    send(api, **{"from": sender}, to=["margaret@hamilton.dev"], subject="Your trial ends tomorrow",
         text="Upgrade to keep your projects.", scheduled_at="in 1 day")
    return receipt


@pytest.mark.parametrize(("name", "viewport"), [("desktop", DESKTOP), ("mobile", MOBILE)])
def test_screenshots(browser: Browser, server: EmulatorServer, api: httpx.Client, name: str,
                     viewport: ViewportSize, tmp_path: Path) -> None:
    screenshots = Path(SCREENSHOTS_DIR) if SCREENSHOTS_DIR else tmp_path
    receipt = _sample_mailbox(api)
    context = browser.new_context(viewport=viewport, device_scale_factor=1, color_scheme="light",
                                  is_mobile=name == "mobile")
    page = context.new_page()
    try:
        open_outbox(page, server)
        expect(page.locator("#rows tr.row")).to_have_count(5)
        expect(page.locator("#rows tr.is-scheduled form button")).to_have_text(["Send now", "Cancel"])
        screenshots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshots / f"outbox-{name}.png"))
        page.goto(f"{server.url}{UI}/messages/{receipt}")
        expect(page.frame_locator("#preview").locator("h1")).to_have_text("Thanks for your order, Ada!")
        expect(page.frame_locator("#preview").locator("img")).to_have_js_property("naturalWidth", 40)
        page.screenshot(path=str(screenshots / f"message-{name}.png"))
        if name == "desktop":
            page.get_by_role("button", name="Tablet", exact=True).click()
            expect(page.locator("#preview")).to_have_js_property("offsetWidth", 768)
            page.screenshot(path=str(screenshots / "message-tablet-preview.png"))
        page.locator("#dark-preview").click()
        frame = page.frame_locator("#preview")
        expect(frame.locator("body")).to_have_css("background-color", "rgb(23, 24, 27)")
        expect(frame.locator("img")).to_have_js_property("naturalWidth", 40)
        page.screenshot(path=str(screenshots / f"message-dark-preview-{name}.png"))
        page.locator("#forced-dark-preview").click()
        expect(page.locator("#forced-note")).to_be_visible()
        page.screenshot(path=str(screenshots / f"message-forced-dark-{name}.png"))
    finally:
        context.close()


@pytest.mark.parametrize(("name", "viewport", "scheme"), [("tablet", {"width": 768, "height": 1024}, "light"),
                                                          ("dark-desktop", DESKTOP, "dark")])
def test_screenshots_of_the_outbox_on_a_tablet_and_in_the_dark_theme(
        browser: Browser, server: EmulatorServer, api: httpx.Client, name: str, viewport: ViewportSize,
        scheme: Literal["light", "dark"], tmp_path: Path) -> None:
    screenshots = Path(SCREENSHOTS_DIR) if SCREENSHOTS_DIR else tmp_path
    _sample_mailbox(api)
    context = browser.new_context(viewport=viewport, device_scale_factor=1, color_scheme=scheme)
    page = context.new_page()
    try:
        open_outbox(page, server)
        expect(page.locator("#rows tr.row")).to_have_count(5)
        screenshots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshots / f"outbox-{name}.png"))
    finally:
        context.close()


# The UI pages send `Referrer-Policy: no-referrer`, under which Chromium posts a same-origin form with
# `Origin: null`: the guard (issue 11) must tell it from a cross-site post by `Sec-Fetch-Site`.
def test_cancel_button_cancels_a_scheduled_email(page: Page, api: httpx.Client,
                                                 server: EmulatorServer) -> None:
    sent = api.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Later",
                                     "html": "<p>later</p>", "scheduled_at": "in 1 hour"}).json()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{server.url}{UI}/")
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel", exact=True).first.click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()  # the confirmation step (issue 39)
    assert api.get(f"/emails/{sent['id']}").json()["last_event"] == "canceled"


def test_reset_button_empties_the_outbox(page: Page, api: httpx.Client, server: EmulatorServer) -> None:
    api.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Hi", "html": "x"})
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{server.url}{UI}/")
    with page.expect_navigation():
        page.get_by_role("button", name="Delete all").first.click()
    assert api.get("/emails").json()["data"] == []
