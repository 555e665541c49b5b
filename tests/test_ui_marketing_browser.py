"""The live progress bar in a real Chromium: a running import's page follows the import without a reload."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, expect

from emulator.testing import EmulatorServer
from tests.test_ui_marketing import imported
from tests.ui_helpers import BROWSER

pytestmark = BROWSER


def test_the_imports_page_follows_a_running_import_live(server: EmulatorServer, api: httpx.Client,
                                                        browser: Browser) -> None:
    imported(api, 1200)
    assert api.post("/_emulator/clock/advance", json={"seconds": 1}).status_code == 200
    page = browser.new_page()
    try:
        page.goto(f"{server.url}/_emulator/ui/imports")
        bar = page.locator("#imports .progress").first
        expect(bar).to_contain_text("500 of 1,200")
        expect(page.locator("#live")).to_have_text("live")
        assert api.post("/_emulator/clock/advance", json={"seconds": 1}).status_code == 200
        expect(bar).to_contain_text("1,000 of 1,200")
        assert api.post("/_emulator/clock/advance", json={"seconds": 1}).status_code == 200
        expect(page.locator("#imports .badge").first).to_have_text("completed")
        assert page.evaluate("document.body.dataset.running") == "false"
    finally:
        page.close()
