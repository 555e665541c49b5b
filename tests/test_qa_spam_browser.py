"""The Checks tab's spam row in a real Chromium at 1280×800 and 390×844: SpamAssassin's score and rules
from Debian's real spamd, and without --spamassassin a row that says how to get them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings
from tests.spamd_helpers import running_spamd
from tests.test_qa_spam import GTUBE
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
SIZES = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]


@pytest.fixture(scope="module")
def checked_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorServer]:
    with running_spamd(tmp_path_factory.mktemp("spamd")) as port, \
            EmulatorServer(make_settings(port=0, spamassassin=f"127.0.0.1:{port}")) as server:
        yield server


def send(server: EmulatorServer, text: str) -> str:
    with httpx.Client(base_url=server.url, headers=AUTH) as client:
        response = client.post("/emails", json={"from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"],
                                                "subject": "Spam check", "html": f"<p>{text}</p>"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def checks_tab(browser: Browser, viewport: ViewportSize, url: str) -> Page:
    page = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE).new_page()
    page.goto(url)
    page.locator("#tab-checks").click()
    return page


@pytest.mark.parametrize("viewport", SIZES)
def test_the_checks_tab_shows_spamassassins_score_and_rules(browser: Browser, checked_server: EmulatorServer,
                                                           viewport: ViewportSize) -> None:
    email_id = send(checked_server, GTUBE)
    page = checks_tab(browser, viewport, f"{checked_server.url}{UI}/messages/{email_id}")
    try:
        expect(page.locator("#spam-score")).to_have_text("1000.0", timeout=30_000)
        expect(page.locator("#spam-verdict")).to_contain_text("Spam by SpamAssassin's measure")
        gtube = page.locator("#spam-rules tr", has_text="GTUBE")
        expect(gtube).to_contain_text("1000.0")
        expect(gtube).to_contain_text("Generic Test for Unsolicited Bulk Email")
        expect(page.locator("#spam-score")).to_have_class("badge bad")
        page.locator("#check-spam").scroll_into_view_if_needed()
        expect(gtube).to_be_in_viewport()
        overflow = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert page.evaluate(overflow) == 0
    finally:
        page.context.close()


def test_an_ordinary_email_is_shown_as_not_spam(browser: Browser, checked_server: EmulatorServer) -> None:
    email_id = send(checked_server, "Thanks for your order #1042. It ships tomorrow.")
    page = checks_tab(browser, DESKTOP, f"{checked_server.url}{UI}/messages/{email_id}")
    try:
        expect(page.locator("#spam-verdict")).to_contain_text("Not spam", timeout=30_000)
        expect(page.locator("#spam-score")).to_have_class("badge ok")
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", SIZES)
def test_without_the_flag_the_row_says_how_to_enable_it(browser: Browser, server: EmulatorServer,
                                                       api: httpx.Client, viewport: ViewportSize) -> None:
    email_id = send(server, "Hello")
    page = checks_tab(browser, viewport, f"{server.url}{UI}/messages/{email_id}")
    try:
        hint = page.locator("#spam-disabled")
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("Start the emulator with --spamassassin HOST:PORT")
    finally:
        page.context.close()
