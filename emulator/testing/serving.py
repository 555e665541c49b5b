"""uvicorn's server as a test handle runs it: in a thread, stopped in milliseconds rather than ~0.2 s.

uvicorn notices `should_exit` on a 0.1 s poll, then waits a fixed 0.1 s for connections to finish and
polls them every 0.1 s: fine for a service, but a test session pays it at every end (issue 28). Here
the poll wakes as soon as the handle asks to stop, and the shutdown waits only as long as connections
and tasks actually need (up to the graceful-shutdown timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable
from typing import Any

from emulator.core.uvicorn_light import import_server_only

# Before `import uvicorn`: the package module without its command line (emulator/core/uvicorn_light.py).
import_server_only()

import uvicorn  # noqa: E402  (after the package module is made)

from emulator.core.draining import drain  # noqa: E402
from emulator.core.wire import WholeResponses  # noqa: E402  (imports uvicorn's protocol modules)

GRACE_SECONDS = 5.0


class ThreadServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, begin_stop: Callable[[], None] = lambda: None) -> None:
        super().__init__(config)
        self._begin_stop = begin_stop  # the emulator's own (`Emulator.begin_stop`): live streams end
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def request_stop(self) -> None:
        """From any thread: stop serving now (the lifespan's shutdown still runs in full)."""
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                self._loop.call_soon_threadsafe(self._wake.set)

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        # The tick still runs every 0.1 s: it refreshes the Date header once a second.
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._begin_stop()
        await drain(self, sockets, self.config.timeout_graceful_shutdown or GRACE_SECONDS)
        await self.lifespan.shutdown()


def thread_server(app: Any, context: ssl.SSLContext | None = None) -> ThreadServer:
    """`context`: serve over TLS with it (Settings.https)."""
    # ws="none": the emulator serves no websockets (live UI updates are SSE), and loading a websocket
    # protocol costs uvicorn a few tens of milliseconds at start.
    config = uvicorn.Config(app, loop="uvloop", http=WholeResponses, ws="none", lifespan="on",
                            log_level="error", access_log=False,
                            ssl_context_factory=(lambda *_: context) if context else None)
    # uvicorn leaves signal handlers alone when it runs outside the main thread.
    return ThreadServer(config, app.state.emu.begin_stop)
