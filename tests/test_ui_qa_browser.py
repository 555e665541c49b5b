"""The message view's QA and polish in a real Chromium, at a desktop (1280×800) and a phone (390×844) size:
the Checks tab, no horizontal overflow, a preview frame as tall as the email, dark-mode preview."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Playwright, ViewportSize, expect, sync_playwright

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import CHROMIUM, CHROMIUM_ARGS, running_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed"),
]
UI = "/_emulator/ui"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
SIZES = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
FLEX_EMAIL = """<!doctype html><html><head><style>.row { display: flex; }</style></head><body>
<div class="row"><a href="javascript:alert(1)">Open</a> <a href="https://acme.dev/orders/1042">Order</a></div>
<img src="https://cdn.acme.dev/a-very-long-path/that-keeps-going/and-going/banner-image-1200x400.png">
</body></html>"""


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    driver: Playwright
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def api(server: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


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
    """How far the page is wider than the window (0 when nothing runs off the edge)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


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
