"""The time-zone setting (issue 39 item 9) in a real Chromium at 1280×800, 768×1024 and 390×844: a chosen
IANA zone shows a known UTC time (the frozen clock's 09:00:00 UTC) at +09:00 on every page and survives a
reload; "Browser zone" follows the browser's own zone (Playwright's timezone_id), and without JavaScript
falls back to UTC and says so; an unknown zone changes nothing and says why."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from emulator.testing import EmulatorServer
from tests.conftest import THREE_IDS, THREE_SCREENS
from tests.ui_helpers import BROWSER
from tests.webhooks_helpers import Receiver

pytestmark = BROWSER
UI = "/_emulator/ui"
TOKYO = "2026-05-14 18:00:00"  # the frozen clock's 2026-05-14 09:00:00 UTC
SAO_PAULO = "2026-05-14 06:00:00"  # UTC-03:00, no daylight saving since 2019


@pytest.fixture(params=THREE_SCREENS, ids=THREE_IDS)
def viewport(request: pytest.FixtureRequest) -> dict[str, int]:
    return dict(request.param)


def _page(browser: Browser, viewport: dict[str, int], **options: object) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport, **options)  # type: ignore[arg-type]
    yield context.new_page()
    context.close()


@pytest.fixture
def page(browser: Browser, viewport: dict[str, int], api: httpx.Client) -> Iterator[Page]:
    yield from _page(browser, viewport, timezone_id="Europe/London")


def mail_and_delivery(api: httpx.Client, receiver: Receiver) -> str:
    assert api.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]}).status_code == 201
    mail = {"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Hi", "text": "x"}
    sent = api.post("/emails", json=mail)
    assert sent.status_code == 200
    assert api.post("/_emulator/webhooks/flush").status_code == 200
    return str(sent.json()["id"])


def choose(page: Page, zone: str) -> None:
    """Through the page's zone link and the zone page, back to the page it was opened from."""
    with page.expect_navigation():
        page.locator("#zone-link").click()
    if zone in ("UTC", "local"):
        button = page.locator(f"#zone-{zone.lower()}")
    else:
        page.locator("#zone-name").fill(zone)
        button = page.locator("#zone-set")
    with page.expect_navigation():
        button.click()


def assert_everywhere(page: Page, server: EmulatorServer, email_id: str, shown: str, offset: str) -> None:
    """The list, the message's headers and activity, the logs and the webhooks all show `shown`."""
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#rows tr.row .c-time time")).to_have_text(shown)
    expect(page.locator(".mail-list .tz-short")).to_have_text(f"UTC{offset}")
    page.goto(f"{server.url}{UI}/messages/{email_id}")
    expect(page.locator("#summary time")).to_have_text(f"{shown} {offset}")
    expect(page.locator("#activity time").first).to_have_text(f"{shown} {offset}")
    page.goto(f"{server.url}{UI}/logs")
    expect(page.locator("#logs .log time").first).to_have_text(shown)
    page.goto(f"{server.url}{UI}/webhooks")
    expect(page.locator("#deliveries .d-time time").first).to_have_text(shown)
    expect(page.locator("#deliveries .tz-short")).to_have_text(f"UTC{offset}")


def test_a_named_zone_applies_everywhere_and_is_remembered(page: Page, server: EmulatorServer,
                                                           api: httpx.Client, receiver: Receiver) -> None:
    email_id = mail_and_delivery(api, receiver)
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#rows tr.row .c-time time")).to_have_text("2026-05-14 09:00:00")
    choose(page, "Asia/Tokyo")
    expect(page.locator("#zone-help-link")).to_have_text("Asia/Tokyo (UTC+09:00)")
    expect(page.locator(".tz-note .tz-name")).to_have_text("Asia/Tokyo (UTC+09:00)")
    assert page.locator("#rows tr.row .c-time time").get_attribute("datetime") == "2026-05-14T18:00:00+09:00"
    assert_everywhere(page, server, email_id, TOKYO, "+09:00")
    page.reload()
    expect(page.locator("#zone-link")).to_have_text("Asia/Tokyo (UTC+09:00)")
    expect(page.locator("#deliveries .d-time time").first).to_have_text(TOKYO)
    choose(page, "UTC")
    expect(page.locator("#deliveries .d-time time").first).to_have_text("2026-05-14 09:00:00")


def test_the_browsers_zone_is_rendered_by_the_browser(browser: Browser, viewport: dict[str, int],
                                                      server: EmulatorServer, api: httpx.Client,
                                                      receiver: Receiver) -> None:
    email_id = mail_and_delivery(api, receiver)
    for page in _page(browser, viewport, timezone_id="America/Sao_Paulo"):
        page.goto(f"{server.url}{UI}/")
        choose(page, "local")
        expect(page.locator(".tz-note .tz-name")).to_have_text("America/Sao_Paulo (UTC-03:00)")
        assert_everywhere(page, server, email_id, SAO_PAULO, "-03:00")
        cookies = page.context.cookies()
    for page in _page(browser, viewport, timezone_id="America/Sao_Paulo", java_script_enabled=False):
        page.context.add_cookies(cookies)
        page.goto(f"{server.url}{UI}/")
        expect(page.locator("#zone-note")).to_have_text(
            "Times are in UTC: showing them in your browser's time zone needs JavaScript.")
        expect(page.locator("#rows tr.row .c-time time")).to_have_text("2026-05-14 09:00:00")
        expect(page.locator(".mail-list .tz-short")).to_have_text("UTC")


def test_an_unknown_zone_changes_nothing_and_says_why(page: Page, server: EmulatorServer,
                                                      api: httpx.Client) -> None:
    api.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Hi", "text": "x"})
    page.goto(f"{server.url}{UI}/zone?back={UI}/")
    page.locator("#zone-name").fill("Asia/Tokyo")
    with page.expect_navigation():
        page.locator("#zone-set").click()
    page.goto(f"{server.url}{UI}/zone?back={UI}/")
    page.locator("#zone-name").fill("Mars/Olympus")
    with page.expect_navigation():
        page.locator("#zone-set").click()
    expect(page.locator("#zone-error")).to_contain_text("“Mars/Olympus” is not a time zone this system knows")
    expect(page.locator("#zone-error")).to_contain_text("times stay in Asia/Tokyo (UTC+09:00)")
    with page.expect_navigation():
        page.locator("#zone-keep").click()
    expect(page.locator("#rows tr.row .c-time time")).to_have_text(TOKYO)
