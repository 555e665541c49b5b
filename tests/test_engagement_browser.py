"""Opens and clicks in a real Chromium: QA opening a tracked email in the outbox and clicking its link
produces `email.opened` and `email.clicked`; the HTML loaded in an ordinary page produces an open; the
email's script never runs in the UI's origin."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import BROWSER, CHROMIUM, CHROMIUM_ARGS, Tracker, running_server

pytestmark = BROWSER


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


def events(api: httpx.Client, email_id: str) -> list[str]:
    assert api.post("/_emulator/flush").status_code == 200
    row = api.get(f"/_emulator/outbox/{email_id}").json()
    return [event["type"] for event in row["events"]]


def test_outbox_open_and_click_are_tracked(server: EmulatorServer) -> None:
    landing = Tracker()  # the link's target: a local page, so the browser never leaves the machine
    try:
        with httpx.Client(base_url=server.url, headers=AUTH) as api, sync_playwright() as driver:
            api.post("/domains", json={"name": "mail.acme.dev", "open_tracking": True,
                                       "click_tracking": True})
            html = (f'<p>Hi</p><a id="go" href="{landing.url}/landing">Go</a>'
                    "<script>window.top.__pwned = 1; document.title = 'pwned'</script>")
            email_id = api.post("/emails", json={"from": "hi@mail.acme.dev", "to": "lin@example.org",
                                                 "subject": "Tracked", "html": html}).json()["id"]
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context()
            page = context.new_page()
            page.goto(f"{server.url}/_emulator/ui/messages/{email_id}")
            frame = page.frame_locator("#preview")
            expect(frame.locator("#go")).to_be_visible()
            clicked_in_timeline = page.locator("#timeline .event-type", has_text="email.clicked")
            expect(clicked_in_timeline).to_have_count(0)
            requested: list[str] = []
            context.on("request", lambda request: requested.append(request.url))
            with context.expect_page() as opened:
                frame.locator("#go").click()
            tab = opened.value
            tab.wait_for_load_state()
            assert landing.hits == ["/landing"]  # the tracking URL redirected the new tab to the link
            # The new tab went through the emulator's tracking URL, which redirected it to the link.
            navigations = [url for url in requested
                           if "/_emulator/t/click/" in url or url.startswith(landing.url)]
            assert len(navigations) == 2 and navigations[0].startswith(f"{server.url}/_emulator/t/click/")
            assert navigations[1] == f"{landing.url}/landing"
            assert page.evaluate("window.__pwned") is None and page.title() != "pwned"
            assert events(api, email_id).count("email.clicked") == 1
            assert "email.opened" in events(api, email_id)
            opens = events(api, email_id).count("email.opened")
            # The activity timeline of the page already open shows the open and the click, live.
            page.locator("#tab-activity").click()
            expect(clicked_in_timeline).to_have_count(1)
            expect(page.locator("#timeline .event-type", has_text="email.opened")).to_have_count(opens)

            stored = api.get(f"/emails/{email_id}").json()["html"]
            plain = context.new_page()
            plain.set_content(stored)
            plain.wait_for_load_state("networkidle")
            assert events(api, email_id).count("email.opened") == opens + 1
            browser.close()
    finally:
        landing.close()
