"""How the HTTP server stops (SIGTERM, SIGINT, a test handle's stop): the order, and the grace it gives.

uvicorn's own shutdown waits for requests under way and then cancels what is left, and a cancelled
request is logged with a traceback and answered with a plain-text 500 (a client still sending its body
at the end of the grace got both, issue 38). Here, at the end of the grace, the connections still busy
are closed instead: their requests see the client gone and end as they do when a client leaves, the
client sees a closed connection, and nothing it sent was acknowledged.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

# After the grace, how long requests whose connection was closed get to notice before they are cancelled.
ABANDON_SECONDS = 1.0


async def drain(server: Any, sockets: list[socket.socket] | None, grace: float) -> None:
    """Stop accepting, let requests under way finish for up to `grace` s, then abandon the rest.
    `server` is a uvicorn Server."""
    for listener in server.servers:
        listener.close()
    for sock in sockets or []:
        sock.close()
    state = server.server_state
    for connection in list(state.connections):
        connection.shutdown()  # idle keep-alive connections close; busy ones after their response
    await _until(server, lambda: not (state.connections or state.tasks), time.monotonic() + grace)
    for connection in list(state.connections):
        connection.transport.abort()
    await _until(server, lambda: not state.tasks, time.monotonic() + ABANDON_SECONDS)
    for task in state.tasks:
        task.cancel(msg="the emulator is stopping")
    for listener in server.servers:
        await listener.wait_closed()


async def _until(server: Any, done: Callable[[], bool], deadline: float) -> None:
    # A short poll: a test handle's stop waits only as long as connections actually need (issue 28).
    # A second Ctrl-C (uvicorn's `force_exit`) ends the wait.
    while not done() and not server.force_exit and time.monotonic() < deadline:
        await asyncio.sleep(0.001)
