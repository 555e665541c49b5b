"""Helpers for the template tests: a real uvicorn server in a thread, the SDK pointed at it, sample bodies.

`emulator/testing.py` (EmulatorServer) is the project-wide version of `ThreadServer`; this one stays
small on purpose and only serves the template tests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import resend
import uvicorn

from emulator.app import create_app
from emulator.config import Settings
from tests.conftest import AUTH, KEY

ORDER_HTML = "<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p>"
ORDER_TEXT = "Name: {{{PRODUCT}}}\nTotal: {{{PRICE}}}"
T0 = "2026-05-14 09:00:00+00"  # the frozen clock of tests/conftest.py, as templates print it


def order_template(**overrides: Any) -> dict[str, Any]:
    """The docs' `order-confirmation` example (templates.md §3)."""
    body: dict[str, Any] = {
        "name": "order-confirmation", "alias": "order-confirmation",
        "from": "Acme Store <store@mail.acme.dev>", "subject": "Thanks for your order!",
        "html": ORDER_HTML, "text": ORDER_TEXT,
        "variables": [{"key": "PRODUCT", "type": "string", "fallback_value": "item"},
                      {"key": "PRICE", "type": "number", "fallback_value": 25}],
    }
    body.update(overrides)
    return body


class ThreadServer:
    """The emulator on 127.0.0.1, port 0, served by uvicorn in a background thread."""

    def __init__(self, settings: Settings) -> None:
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning",
                                lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="template-tests-server", daemon=True)
        self.url = ""

    def start(self) -> ThreadServer:
        self.thread.start()
        ready = threading.Event()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the emulator server failed to start")
            ready.wait(0.005)  # startup is measured in milliseconds; this only yields the CPU
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def reset(self) -> None:
        assert httpx.post(f"{self.url}/_emulator/reset").status_code == 200

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=AUTH)


@contextmanager
def sdk_against(url: str, key: str = KEY) -> Iterator[None]:
    """Point the module-global `resend` SDK configuration at `url` for the duration of the block."""
    saved = (resend.api_url, resend.api_key)
    resend.api_url, resend.api_key = url, key
    try:
        yield
    finally:
        resend.api_url, resend.api_key = saved


def plain(response: Any) -> Any:
    """An SDK response as the wire body: the SDK adds `http_headers` to every dict client-side."""
    if isinstance(response, dict):
        return {key: plain(value) for key, value in response.items() if key != "http_headers"}
    if isinstance(response, list):
        return [plain(item) for item in response]
    return response
