"""The live indicator in a real Chromium: the stream's planned recycles reconnect silently; a real outage
shows "reconnecting" only once it has lasted 2 s, and clears when the stream is back (also after an error
status, which closes an EventSource for good)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from emulator.testing import EmulatorServer
from emulator.web import sse
from tests.conftest import THREE_IDS, THREE_SCREENS
from tests.ui_helpers import BROWSER

pytestmark = BROWSER
UI = "/_emulator/ui"
EVENTS = "**/_emulator/ui/events*"
# Every change of the indicator's text, with the browser's wall-clock time.
RECORD = """() => {
  window.liveLog = [];
  const live = document.getElementById("live");
  new MutationObserver(() => window.liveLog.push([live.textContent, Date.now()]))
    .observe(live, {childList: true, characterData: true, subtree: true});
}"""


@pytest.fixture
def short_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams recycle every 1.5 s instead of 15 s (the server runs in this process, in a thread)."""
    monkeypatch.setattr(sse, "STREAM_SECONDS", 1.5)


@pytest.fixture(params=THREE_SCREENS, ids=THREE_IDS)
def page(request: pytest.FixtureRequest, browser: Browser, server: EmulatorServer,
         short_streams: None) -> Iterator[Page]:
    opened = browser.new_page(viewport=request.param)
    streams: list[float] = []
    opened.on("request", lambda request: streams.append(time.time()) if "/events" in request.url else None)
    opened.goto(f"{server.url}{UI}/")
    expect(opened.locator("#live")).to_have_text("live", timeout=20_000)
    opened.evaluate(RECORD)
    opened.streams = streams  # type: ignore[attr-defined]
    yield opened
    opened.close()


def wait_for_streams(page: Page, count: int) -> None:
    streams: list[float] = page.streams  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while len(streams) < count and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert len(streams) >= count, streams


def log(page: Page) -> list[tuple[str, int]]:
    return [(text, at) for text, at in page.evaluate("window.liveLog")]


def test_planned_recycles_never_show_reconnecting(page: Page) -> None:
    opened = len(page.streams)  # type: ignore[attr-defined]
    wait_for_streams(page, opened + 2)  # two recycles, each a new stream
    page.wait_for_timeout(500)  # the second new stream opened
    expect(page.locator("#live")).to_have_text("live")
    assert [text for text, _ in log(page) if text != "live"] == []


@pytest.mark.parametrize("failure", ["network", "503"])
def test_an_outage_shows_after_2_seconds_and_clears_when_the_stream_is_back(page: Page, failure: str) -> None:
    failed: list[float] = []

    def fail(route: Route) -> None:
        failed.append(time.time() * 1000)
        if failure == "network":
            route.abort("connectionrefused")
        else:
            route.fulfill(status=503, body="down")

    page.route(EVENTS, fail)
    expect(page.locator("#live")).to_have_text("reconnecting", timeout=30_000)
    assert failed, "the indicator showed trouble before the stream failed"
    shown = next(at for text, at in log(page) if text == "reconnecting")
    # The first failed request comes after the browser sent it: the real outage began no later.
    assert shown - failed[0] >= 2000 - 50, (shown - failed[0], failed)
    page.unroute(EVENTS)
    expect(page.locator("#live")).to_have_text("live", timeout=30_000)
