"""The UI's own forms work in a real Chromium behind the control-plane guard (issue 11).

The UI pages send `Referrer-Policy: no-referrer`, under which Chromium posts a same-origin form with
`Origin: null`; the guard must tell it from a cross-site post by `Sec-Fetch-Site`.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import BROWSER, chromium, running_server

pytestmark = BROWSER
UI = "/_emulator/ui"


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def api(server: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def test_cancel_button_cancels_a_scheduled_email(browser: Browser, api: httpx.Client,
                                                 server: EmulatorServer) -> None:
    sent = api.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Later",
                                     "html": "<p>later</p>", "scheduled_at": "in 1 hour"}).json()
    page = browser.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{server.url}{UI}/")
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel", exact=True).first.click()
    assert api.get(f"/emails/{sent['id']}").json()["last_event"] == "canceled"
    page.close()


def test_reset_button_empties_the_outbox(browser: Browser, api: httpx.Client, server: EmulatorServer) -> None:
    api.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.org"], "subject": "Hi", "html": "x"})
    page = browser.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{server.url}{UI}/")
    with page.expect_navigation():
        page.get_by_role("button", name="Delete all").first.click()
    assert api.get("/emails").json()["data"] == []
    page.close()
