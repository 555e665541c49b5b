"""The outermost middleware: every HTTP answer counted for `/_emulator/metrics` (by route template,
method and status, and its duration in a histogram) and, when asked, written as a request line
(`-v` text, or `--log-format json`).

Labels stay few whatever the traffic: the route is the template the router matched (`/emails/{email_id}`,
never a path with an id; `unmatched` when none did) and a method outside HTTP's own is `OTHER`. Per
request this costs a dict increment, a bisect into the bucket bounds and a wrapper on `send`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.routing import Mount

from emulator.api.access_log import RequestWriter
from emulator.core.metrics import Metrics

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def route_template(scope: Scope) -> str:
    """The path pattern of the route that answered: Starlette's router (and LazyRoutes, and the API's
    shortcut for literal paths) leave it in `scope["route"]`."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return UNMATCHED
    return f"{path}/{{path}}" if isinstance(route, Mount) else path


class Telemetry:
    def __init__(self, app: ASGIApp, metrics: Metrics, write: RequestWriter | None = None) -> None:
        self.app = app
        self.requests, self.durations = metrics.requests, metrics.durations
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
            seconds = time.perf_counter() - started
            route = route_template(scope)
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            self.requests.inc((route, method, str(status)))
            self.durations.observe((route, method), seconds)
            if self.write is not None:
                self.write(scope, route, status, seconds)
