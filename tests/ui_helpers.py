"""A real emulator server (uvicorn on 127.0.0.1, port 0, in a thread) and a Chromium for UI tests."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn

from emulator.app import create_app
from tests.conftest import make_settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class ServerThread:
    def __init__(self, **settings: Any) -> None:
        self.app = create_app(make_settings(**settings))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # Open UI event streams must not hold up the shutdown at the end of the run.
        config = uvicorn.Config(self.app, log_level="warning", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def start(self) -> None:
        self.thread.start()
        ready = threading.Event()
        while not self.server.started and self.thread.is_alive():
            ready.wait(0.01)
        assert self.server.started, "the emulator did not start"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()


@contextmanager
def running_server(**settings: Any) -> Iterator[ServerThread]:
    server = ServerThread(**settings)
    server.start()
    try:
        yield server
    finally:
        server.stop()


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
