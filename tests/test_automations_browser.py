"""The Logs and Automations tabs in a real Chromium: requests with redacted bodies; an automation's steps,
its runs and each step's status and timestamps."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import BROWSER, CHROMIUM, CHROMIUM_ARGS, running_server

pytestmark = BROWSER


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


def test_logs_and_automations_tabs(server: EmulatorServer) -> None:
    with httpx.Client(base_url=server.url, headers={**AUTH, "user-agent": "qa-check/1"}) as api:
        token = api.post("/api-keys", json={"name": "ci"}).json()["token"]
        automation_id = api.post("/automations", json={
            "name": "Welcome flow", "status": "enabled",
            "steps": [{"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
                      {"key": "wait", "type": "delay", "config": {"duration": "1 hour"}}],
            "connections": [{"from": "start", "to": "wait"}]}).json()["id"]
        api.post("/events/send", json={"event": "user.created", "email": "ada@example.org"})
        assert api.post("/_emulator/flush").status_code == 200
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"{server.url}/_emulator/ui/logs")
            newest = page.locator("#logs .log").first
            expect(newest).to_contain_text("POST /events/send")
            expect(newest.locator(".badge")).to_have_text("202")
            expect(newest.locator("time")).to_have_text("2026-05-14 09:00:00")
            expect(newest).to_contain_text("qa-check/1")
            expect(page.locator("#logs")).to_contain_text("[redacted]")
            assert token not in page.content()
            page.click("nav.sections >> text=Automations")
            card = page.locator(f'.automation[data-id="{automation_id}"]')
            expect(card).to_contain_text("Welcome flow")
            expect(card.locator(".steps")).to_contain_text("delay")
            expect(card.locator(".steps")).to_contain_text("1 hour")
            run = card.locator("details.run").first
            expect(run).to_have_attribute("data-status", "running")
            run.locator("summary").click()
            expect(run.locator(".timeline")).to_contain_text("start")
            expect(run.locator(".timeline")).to_contain_text("running")
            # An hour later on the clock the delay is done: the run and each step show completed, with times.
            assert api.post("/_emulator/clock/advance", json={"seconds": 3600}).status_code == 200
            page.reload()
            run = page.locator(f'.automation[data-id="{automation_id}"] details.run').first
            expect(run).to_have_attribute("data-status", "completed")
            run.locator("summary").click()
            steps = run.locator(".timeline li")
            expect(steps).to_have_count(2)
            expect(steps.nth(0)).to_contain_text("trigger · completed")
            expect(steps.nth(0).locator("time")).to_have_text(["2026-05-14 09:00:00", "2026-05-14 09:00:00"])
            expect(steps.nth(1)).to_contain_text("delay · completed")
            expect(steps.nth(1).locator("time")).to_have_text(["2026-05-14 09:00:00", "2026-05-14 10:00:00"])
            browser.close()
