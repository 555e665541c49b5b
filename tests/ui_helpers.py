"""A real emulator server (EmulatorServer: 127.0.0.1, port 0, in a thread) and a Chromium for UI tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, sync_playwright

from emulator.testing import EmulatorServer
from tests.conftest import make_settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Every browser test module: `pytestmark = BROWSER`.
# (tests/conftest.py fails them, naming the install command, where Chromium is missing)
BROWSER = [pytest.mark.browser]


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (its own browser downloads cannot run here)."""
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def running_server(**settings: Any) -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0, **settings)) as server:
        yield server


class Tracker:
    """A "remote" image host on another port: it counts the requests it gets (a tracking pixel)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        tracker = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                tracker.hits.append(self.path)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class OtherOrigin:
    """Another local origin (127.0.0.1, another port) serving one page: a hostile site, a link."""

    def __init__(self, page: str) -> None:
        payload = page.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_titled(api: httpx.Client, subject: str, **fields: object) -> str:
    """Send one small HTML email with this subject (other fields override the defaults); its id."""
    body: dict[str, object] = {"from": "Acme <orders@acme.dev>", "to": ["delivered@resend.dev"],
                               "subject": subject, "html": f"<p>{subject}</p>"}
    response = api.post("/emails", json={**body, **fields})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])
