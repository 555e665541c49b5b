"""Shared fixtures: an app per test (fresh in-memory state) driven through httpx (Starlette's TestClient)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import hypothesis
import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.core.config import Settings
from emulator.testing import EmulatorServer

# No per-example deadline: the suite runs on loaded 2-core machines (`pytest -n 2`), where a trivial example
# took 295 ms once; speed is the benchmarks' business, not the tests'.
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from tests.webhooks_helpers import Receiver

def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that needs Chromium or Node.js fails, naming the command that installs it, when it is
    missing: the suite never skips in silence (README: Before you start; .ci/run installs both)."""
    for marker, missing in (("browser", missing_chromium), ("node", missing_node)):
        if item.get_closest_marker(marker) is not None:
            reason = missing()
            if reason:
                pytest.fail(reason, pytrace=False)
    if item.get_closest_marker("browser") is not None:
        from playwright.sync_api import expect

        # Playwright's assertions retry for 5 s by default; a page on a loaded 2-core machine under
        # `pytest -n 2` can take longer to settle. A passing assertion still returns as soon as it holds.
        expect.set_options(timeout=BROWSER_EXPECT_MS)


def missing_chromium() -> str | None:
    if Path(CHROMIUM).exists():
        return None
    return f"Chromium is not installed at {CHROMIUM}: run `{install('chromium')}` (as .ci/run does)"


@cache
def missing_node() -> str | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return f"Node.js and npm are not installed: run `{install('nodejs npm')}` (as .ci/run does)"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < NODE_MAJOR:
        return f"Node.js {version} is too old: the Node tests need {NODE_MAJOR} or newer"
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skip anywhere (a `skipif`, an `importorskip`) is reported as a failure with its reason."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"{reason} (this suite does not skip tests: install what is missing, see make test)"


CHROMIUM = "/usr/bin/chromium"
BROWSER_EXPECT_MS = 20_000
NODE_MAJOR = 20


def install(packages: str) -> str:
    sudo = "" if os.geteuid() == 0 else "sudo "
    return f"{sudo}apt-get update && {sudo}apt-get install -y {packages}"


KEY = "re_test_123"
AUTH = {"Authorization": f"Bearer {KEY}"}
FROZEN_AT = datetime(2026, 5, 14, 9, 0, 0, tzinfo=UTC)


def make_settings(**overrides: object) -> Settings:
    # `testserver`: the Host of Starlette's TestClient (the emulator answers only to local names).
    values: dict[str, object] = {"api_keys": [KEY], "clock": "frozen", "clock_start": FROZEN_AT,
                                 "smtp": False, "seed": 0, "allowed_hosts": ["testserver"]}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings() -> Settings:
    return make_settings()


ERROR_KEYS = ["statusCode", "message", "name"]


def assert_error_shape(response: httpx.Response) -> None:
    """Every error the suite provokes must have Resend's wire shape (checked on every client response)."""
    if response.status_code < 400 or not response.url.path.startswith(API_PREFIXES):
        return
    response.read()
    assert response.headers["content-type"].startswith("application/json"), response.url
    body = response.json()
    assert list(body) == ERROR_KEYS, body
    assert body["statusCode"] == response.status_code, body
    assert isinstance(body["message"], str) and body["message"], body
    assert isinstance(body["name"], str) and body["name"].islower(), body


# Paths whose errors use the standard shape (OAuth protocol endpoints and UI pages differ).
API_PREFIXES = ("/emails", "/email", "/domains", "/api-keys", "/templates", "/webhooks", "/contacts",
                "/audiences", "/segments", "/topics", "/broadcasts", "/logs", "/suppressions", "/inboxes",
                "/_emulator/flush", "/_emulator/clock", "/_emulator/reset", "/nope")


@contextmanager
def api_client(settings: Settings) -> Iterator[TestClient]:
    """A TestClient over a fresh app whose every error response is checked for the wire shape."""
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as test_client:
        test_client.event_hooks = {"request": [], "response": [assert_error_shape]}
        yield test_client


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with api_client(settings) as test_client:
        yield test_client


def flush(client: TestClient) -> None:
    assert client.post("/_emulator/flush").status_code == 200


@contextmanager
def running_cli(*args: str) -> Iterator[str]:
    """`python -m emulator --port 0 --no-smtp ARGS` as a real process; yields its printed URL."""
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", *args],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    try:
        assert first.startswith("resend-emulator listening on "), first
        yield first.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def live_server() -> Iterator[EmulatorServer]:
    """A real server (uvicorn in a thread, 127.0.0.1, port 0) shared by a module; reset it per test."""
    with EmulatorServer(make_settings(port=0)) as server:
        yield server


@pytest.fixture(scope="module")
def server(live_server: EmulatorServer) -> EmulatorServer:
    """The module's live server under the name the browser and guard tests use (a module may define its
    own `server` with other settings)."""
    return live_server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, one per module (tests/ui_helpers.py; imported here only when asked for)."""
    from tests.ui_helpers import chromium

    with chromium() as launched:
        yield launched


# The two screens every outbox browser test runs on (issue 26): a laptop and a phone.
SCREENS = [{"width": 1280, "height": 800}, {"width": 390, "height": 844}]


# Issue 39's checks also run on a tablet, where a list has the least room for its columns.
THREE_SCREENS = [SCREENS[0], {"width": 768, "height": 1024}, SCREENS[1]]
THREE_IDS = ["desktop", "tablet", "phone"]


def _fresh_page(browser: Browser, viewport: dict[str, int]) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    opened = context.new_page()
    opened.on("dialog", lambda dialog: dialog.accept())
    yield opened
    context.close()


@pytest.fixture(params=SCREENS, ids=["desktop", "phone"])
def screen_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    """A fresh page at 1280×800 and at 390×844; `confirm()` dialogs are accepted, as a user would."""
    yield from _fresh_page(browser, request.param)


@pytest.fixture(params=THREE_SCREENS, ids=THREE_IDS)
def three_screen_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    """The same at 1280×800, 768×1024 and 390×844."""
    yield from _fresh_page(browser, request.param)


@pytest.fixture
def api(server: EmulatorServer) -> Iterator[httpx.Client]:
    """An API client for `server`, whose state is reset first."""
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real local HTTP server that records the signed webhooks it receives."""
    from tests.webhooks_helpers import running_receiver  # svix and friends load only where used

    with running_receiver() as found:
        yield found
