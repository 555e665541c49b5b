"""`--log-requests` (`-v`): one line per HTTP request — method, path, status, milliseconds.

Outermost middleware, so requests the guard refuses are logged too. The query string is left out: it can
carry an API key (`/_emulator/outbox?api_key=…`), and the line is for following traffic, not replaying it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def access_line(method: str, path: str, status: int, seconds: float) -> str:
    return f"{method} {path} {status} {seconds * 1000:.1f}ms"


class AccessLog:
    def __init__(self, app: ASGIApp, write: Callable[[str], None]) -> None:
        self.app = app
        self.write = write

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets when the app raises before answering

        async def watch(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self.write(access_line(scope["method"], scope["path"], status, time.perf_counter() - started))
