"""Issue 39 item 10 and 11 in a real Chromium: the Checks tab's link check lists each link's status, the
release form forwards the message to an SMTP sink, labels are added and removed in the message view and
shown in the list, and the favicon carries the unread count as new mail arrives."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings
from tests.test_link_probe import Site, closed_port
from tests.test_release import sink
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
SIZES = [pytest.param({"width": 1280, "height": 800}, id="desktop"),
         pytest.param({"width": 768, "height": 1024}, id="tablet"),
         pytest.param({"width": 390, "height": 844}, id="phone")]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    found = Site()
    yield found
    found.close()


@pytest.fixture
def api(server: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def open_page(browser: Browser, viewport: ViewportSize, url: str) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


def overflow(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def send(api: httpx.Client, subject: str, html: str = "<p>Hi</p>") -> str:
    response = api.post("/emails", json={"from": "qa@acme.dev", "to": ["ada@lovelace.dev"],
                                         "subject": subject, "html": html})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


@pytest.mark.parametrize("viewport", SIZES)
def test_the_checks_tab_requests_each_link_and_lists_its_status(browser: Browser, server: EmulatorServer,
                                                              api: httpx.Client, site: Site,
                                                              viewport: ViewportSize) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/gone"
    html = (f'<a href="{site.url}/ok">ok</a> <a href="{site.url}/missing">missing</a>'
            f' <a href="{site.url}/no-head">no head</a> <a href="{refused}">refused</a>')
    page = open_page(browser, viewport, f"{server.url}{UI}/messages/{send(api, 'Links', html)}")
    try:
        page.locator("#tab-checks").click()
        page.locator("#link-probe-button").click()
        table = page.locator("#link-probe-table")
        expect(table).to_be_visible(timeout=30_000)
        expect(table.locator(f'tr[data-url="{site.url}/ok"]')).to_have_attribute("data-status", "200")
        expect(table.locator(f'tr[data-url="{site.url}/missing"]')).to_have_attribute("data-status", "404")
        expect(table.locator(f'tr[data-url="{site.url}/no-head"]')).to_contain_text("GET (HEAD not allowed)")
        expect(table.locator(f'tr[data-url="{refused}"]')).to_have_attribute("data-error", "refused")
        expect(page.locator("#link-probe-summary")).to_contain_text("4 links requested: 2 broken")
        assert overflow(page) == 0
    finally:
        page.context.close()


def test_the_release_form_forwards_the_message(browser: Browser, server: EmulatorServer,
                                               api: httpx.Client) -> None:
    email_id = send(api, "Release me")
    stored = api.get(f"/_emulator/outbox/{email_id}.eml").content
    with sink() as (handler, port):
        page = open_page(browser, {"width": 1280, "height": 800}, f"{server.url}{UI}/messages/{email_id}")
        try:
            page.locator("#release summary").click()
            page.locator("#release-host").fill("127.0.0.1")
            page.locator("#release-port").fill(str(port))
            page.locator("#release-to").fill("me@device.test")
            page.locator("#release-submit").click()
            expect(page.locator("#release-result")).to_contain_text(
                f"Released to me@device.test through 127.0.0.1:{port}.")
            page.locator("#back-to-message").click()
            expect(page.locator("#subject")).to_have_text("Release me")
        finally:
            page.context.close()
    assert handler.received == [("qa@acme.dev", ["me@device.test"], stored)]


@pytest.mark.parametrize("viewport", SIZES)
def test_labels_are_added_and_removed_in_the_message_view_and_shown_in_the_list(
        browser: Browser, server: EmulatorServer, api: httpx.Client, viewport: ViewportSize) -> None:
    email_id = send(api, "Label me")
    page = open_page(browser, viewport, f"{server.url}{UI}/messages/{email_id}")
    try:
        page.locator("#label-input").fill("needs review")
        page.locator("#label-submit").click()
        expect(page.locator("#labels .label")).to_have_text(["needs review×"])
        assert overflow(page) == 0
        page.goto(f"{server.url}{UI}/?q=label:%22needs+review%22")
        expect(page.locator("#rows tr.row")).to_have_count(1)
        expect(page.locator("#rows tr.row .label")).to_have_text("needs review")
        assert overflow(page) == 0
        page.goto(f"{server.url}{UI}/messages/{email_id}")
        page.get_by_role("button", name="Remove label needs review").click()
        expect(page.locator("#labels .label")).to_have_count(0)
    finally:
        page.context.close()


def favicon(page: Page) -> tuple[str, str]:
    return (page.locator('link[rel="icon"]').get_attribute("data-unread") or "",
            unquote(page.locator('link[rel="icon"]').get_attribute("href") or ""))


def test_the_favicon_shows_the_unread_count_as_mail_arrives(browser: Browser, server: EmulatorServer,
                                                            api: httpx.Client) -> None:
    send(api, "One")
    page = open_page(browser, {"width": 1280, "height": 800}, f"{server.url}{UI}/")
    try:
        expect(page.locator('link[rel="icon"]')).to_have_attribute("data-unread", "1", timeout=20_000)
        href = favicon(page)[1]
        assert href.startswith("data:image/svg+xml,<svg") and ">1</text>" in href
        expect(page.locator("#live")).to_have_text("live", timeout=20_000)
        send(api, "Two")
        send(api, "Three")
        expect(page.locator('link[rel="icon"]')).to_have_attribute("data-unread", "3", timeout=20_000)
        assert ">3</text>" in favicon(page)[1]
        assert page.title().startswith("(3) ")
    finally:
        page.context.close()


def test_the_favicon_caps_its_badge_but_the_title_keeps_the_number(browser: Browser, server: EmulatorServer,
                                                                   api: httpx.Client) -> None:
    batch = [{"from": "qa@acme.dev", "to": ["a@b.dev"], "subject": f"n{n}", "text": "x"} for n in range(100)]
    for start in (0, 100):
        response = api.post("/emails/batch", json=batch if start == 0 else batch[:20])
        assert response.status_code == 200, response.text
    page = open_page(browser, {"width": 390, "height": 844}, f"{server.url}{UI}/")
    try:
        expect(page.locator('link[rel="icon"]')).to_have_attribute("data-unread", "99+", timeout=20_000)
        assert ">99+</text>" in favicon(page)[1]
        assert page.title().startswith("(120) ")
    finally:
        page.context.close()


def test_a_team_host_without_the_flags_explains_them(browser: Browser) -> None:
    with EmulatorServer(make_settings(port=0, link_check=False, release=False)) as server, \
            httpx.Client(base_url=server.url, headers=AUTH) as api:
        url = f"{server.url}{UI}/messages/{send(api, 'Off')}"
        page = open_page(browser, {"width": 1280, "height": 800}, url)
        try:
            page.locator("#tab-checks").click()
            expect(page.locator("#link-probe-off")).to_contain_text("--link-check")
            expect(page.locator("#link-probe-button")).to_have_count(0)
            page.locator("#release summary").click()
            expect(page.locator("#release-off")).to_contain_text("--release")
        finally:
            page.context.close()
