"""The message view's QA and polish in a real Chromium, at a desktop (1280×800) and a phone (390×844) size:
the Checks tab, no horizontal overflow, a preview frame as tall as the email, dark-mode preview."""

from __future__ import annotations

import base64
import re

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
SIZES = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
FLEX_EMAIL = """<!doctype html><html><head><style>.row { display: flex; }</style></head><body>
<div class="row"><a href="javascript:alert(1)">Open</a> <a href="https://acme.dev/orders/1042">Order</a></div>
<img src="https://cdn.acme.dev/a-very-long-path/that-keeps-going/and-going/banner-image-1200x400.png">
</body></html>"""


def open_page(browser: Browser, viewport: ViewportSize, url: str, **options: object) -> Page:
    context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE, **options)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(url)
    return page


def send(api: httpx.Client, **fields: object) -> str:
    body: dict[str, object] = {"from": "Acme Orders <orders@acme.dev>", "to": ["ada@lovelace.dev"],
                               "subject": "Hello", "text": "Hello there."}
    body.update(fields)
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def overflow(page: Page) -> int:
    """How far the page is wider than the screen (0 when nothing runs off the edge). Not innerWidth: a
    phone browser zooms out to fit wide content, so innerWidth grows with the overflow itself."""
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


@pytest.mark.parametrize("viewport", SIZES)
def test_checks_tab_shows_unsupported_css_and_bad_links(browser: Browser, server: EmulatorServer,
                                                       api: httpx.Client, viewport: ViewportSize) -> None:
    email_id = send(api, html=FLEX_EMAIL)
    page = open_page(browser, viewport, f"{server.url}{UI}/messages/{email_id}")
    try:
        page.locator("#tab-checks").click()
        unsupported = page.locator("#html-unsupported")
        expect(unsupported).to_contain_text("display:flex")
        expect(unsupported.locator("tr", has_text="display:flex")).to_contain_text("Outlook Windows")
        links = page.locator("#link-table")
        expect(links.locator("tr", has_text="javascript:alert(1)")).to_contain_text("javascript")
        expect(links.locator("tr", has_text="banner-image")).to_contain_text("missing alt")
        expect(page.locator("#check-unsubscribe .badge")).to_have_text("warning")
        expect(page.locator("#check-text")).to_contain_text("The HTML links to https://acme.dev/orders/1042")
        assert overflow(page) == 0
    finally:
        page.context.close()


def test_checks_tab_of_a_plain_table_email_reports_no_unsupported_feature(browser: Browser,
                                                                          server: EmulatorServer,
                                                                          api: httpx.Client) -> None:
    html = '<table width="100%"><tr><td style="color:#333333">Your order shipped.</td></tr></table>'
    email_id = send(api, html=html, text="Your order shipped.")
    page = open_page(browser, DESKTOP, f"{server.url}{UI}/messages/{email_id}")
    try:
        page.locator("#tab-checks").click()
        expect(page.locator("#html-all-supported")).to_be_visible()
        expect(page.locator("#html-unsupported")).to_have_count(0)
    finally:
        page.context.close()


TALL_EMAIL = """<!doctype html><html><body style="margin:0">
<div style="height:3000px;background:linear-gradient(#fff,#ddd)">Top of a long newsletter</div>
<p id="end">The very end</p></body></html>"""
DARK_AWARE = """<!doctype html><html><head><meta name="color-scheme" content="light dark"><style>
body { background: #ffffff; color: #222222; }
@media (prefers-color-scheme: dark) { body { background: #111111; color: #eeeeee; } }
</style></head><body><p>Hello in both schemes</p></body></html>"""
WIDE_EMAIL = ('<table width="1200"><tr><td><img width="1200" height="80" alt="banner" src="data:image/gif;'
              'base64,R0lGODlhAQABAAAAACw="></td></tr></table>'
              f'<p>{"averyveryverylongwordwithoutspaces" * 8}</p>')
PDF = base64.b64encode(b"%PDF-1.4").decode()


def crowded_mailbox(api: httpx.Client) -> str:
    """Long names, addresses, subjects, tags and many attachments: what pushes a layout off the edge."""
    attachments = [{"filename": f"quarterly-report-with-a-rather-long-file-name-{n}.pdf", "content": PDF}
                   for n in range(6)]
    send(api, **{"from": "Acme Billing Department <billing-notifications@very-long-subdomain.acme.dev>"},
         to=["Ada Lovelace <ada.lovelace.countess.of.lovelace@analytical-engine.example.org>"],
         cc=["Grace Hopper <grace@hopper.dev>"], subject="An extraordinarily long subject line " * 4,
         tags=[{"name": "campaign", "value": "spring-sale-2026-extended-edition"}])
    return send(api, html=WIDE_EMAIL, subject="Wide", attachments=attachments,
                to=["a-recipient-with-a-very-long-address@subdomain.example.org"])


@pytest.mark.parametrize("viewport", SIZES)
def test_nothing_overflows_the_list_or_the_message_page(browser: Browser, server: EmulatorServer,
                                                        api: httpx.Client, viewport: ViewportSize) -> None:
    wide = crowded_mailbox(api)
    page = open_page(browser, viewport, f"{server.url}{UI}/")
    try:
        expect(page.locator("#rows tr.row")).to_have_count(2)
        assert overflow(page) == 0
        page.goto(f"{server.url}{UI}/messages/{wide}")
        expect(page.frame_locator("#preview").locator("img")).to_have_count(1)
        assert overflow(page) == 0
        expect(page.locator("#preview")).to_have_attribute("style", re.compile(r"height: \d+px"))
        fit = frame_fit(page)
        assert fit["scroll"] <= fit["view"], fit  # wider than the frame, yet no vertical inner scroll
        for tab in ("text", "headers", "raw", "activity", "checks"):
            page.locator(f"#tab-{tab}").click()
            assert overflow(page) == 0, tab
    finally:
        page.context.close()


def frame_fit(page: Page) -> dict[str, float]:
    """The frame's height on the page and its document's scrollable height inside."""
    frame = page.frame_locator("#preview").locator("html")
    inner = frame.evaluate("() => ({scroll: document.scrollingElement.scrollHeight,"
                           " view: document.documentElement.clientHeight})")
    return {"frame": page.locator("#preview").bounding_box()["height"], **inner}  # type: ignore[index]


@pytest.mark.parametrize("viewport", SIZES)
def test_the_preview_is_as_tall_as_the_email(browser: Browser, server: EmulatorServer, api: httpx.Client,
                                            viewport: ViewportSize) -> None:
    tall, short = send(api, html=TALL_EMAIL), send(api, html="<p>Thanks!</p>")
    page = open_page(browser, viewport, f"{server.url}{UI}/messages/{tall}")
    try:
        expect(page.locator("#preview")).to_have_attribute("style", re.compile(r"height: 3\d{3}px"))
        fit = frame_fit(page)
        assert fit["frame"] >= 3000 and fit["scroll"] <= fit["view"], fit  # whole, no inner scrollbar
        page.goto(f"{server.url}{UI}/messages/{short}")
        expect(page.locator("#preview")).to_have_attribute("style", re.compile(r"height: \d{2,3}px"))
        fit = frame_fit(page)
        assert fit["frame"] < 150 and fit["scroll"] <= fit["view"], fit  # no blank half page
    finally:
        page.context.close()


def test_dark_mode_toggle_renders_the_email_with_its_dark_styles(browser: Browser, server: EmulatorServer,
                                                                 api: httpx.Client) -> None:
    email_id = send(api, html=DARK_AWARE)
    page = open_page(browser, DESKTOP, f"{server.url}{UI}/messages/{email_id}", color_scheme="light")
    body = page.frame_locator("#preview").locator("body")
    try:
        expect(body).to_have_css("background-color", "rgb(255, 255, 255)")
        expect(body).to_have_css("color", "rgb(34, 34, 34)")
        page.locator("#dark-preview").click()
        expect(page.locator("#dark-preview")).to_have_attribute("aria-pressed", "true")
        expect(body).to_have_css("background-color", "rgb(17, 17, 17)")
        expect(body).to_have_css("color", "rgb(238, 238, 238)")
        page.locator("#dark-preview").click()
        expect(body).to_have_css("background-color", "rgb(255, 255, 255)")
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", SIZES)
def test_list_shows_names_cc_and_utc_and_the_page_has_a_favicon(browser: Browser, server: EmulatorServer,
                                                                api: httpx.Client,
                                                                viewport: ViewportSize) -> None:
    email_id = send(api, **{"from": "Acme Billing <billing@acme.dev>"},
                    to=["Ada Lovelace <ada@lovelace.dev>"], cc=["grace@hopper.dev"])
    context = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    try:
        page.goto(f"{server.url}{UI}/")
        row = page.locator(f'#rows tr.row[data-id="{email_id}"]')
        expect(row.locator(".c-from")).to_contain_text("Acme Billing")
        expect(row.locator(".c-from")).to_contain_text("billing@acme.dev")
        expect(row.locator(".c-to")).to_contain_text("Ada Lovelace")
        expect(row.locator(".c-to .cc")).to_have_text("cc grace@hopper.dev")
        expect(page.locator(".summary .tz-note")).to_have_text("times in UTC")
        # One unread email: the icon is drawn with its badge (issue 39), from the plain icon it fetched.
        icon = page.locator('link[rel="icon"]')
        expect(icon).to_have_attribute("data-unread", "1")
        assert (icon.get_attribute("href") or "").startswith("data:image/svg+xml,")
        response = page.request.get(f"{server.url}{UI}/static/favicon.svg")
        assert response.status == 200 and response.headers["content-type"].startswith("image/svg+xml")
        page.goto(f"{server.url}{UI}/messages/{email_id}")
        expect(page.locator("#summary time")).to_contain_text("UTC")
        assert failed == []
    finally:
        context.close()


def test_a_bounce_shows_its_reason_in_the_summary_and_the_activity(browser: Browser, server: EmulatorServer,
                                                                   api: httpx.Client) -> None:
    email_id = send(api, to=["bounced@resend.dev"])
    assert api.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    page = open_page(browser, DESKTOP, f"{server.url}{UI}/messages/{email_id}")
    try:
        expect(page.locator("#status")).to_have_text("bounced")
        expect(page.locator("#status-reason")).to_contain_text("Permanent bounce (NoEmail): The recipient's")
        page.locator("#tab-activity").click()
        reason = page.locator("#timeline .event", has_text="email.bounced").locator(".reason")
        expect(reason).to_contain_text("Permanent bounce (NoEmail): ")
    finally:
        page.context.close()
