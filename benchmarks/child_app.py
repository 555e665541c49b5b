"""An aiohttp app served in a process of its own, as a user's receiver would be: it shares no GIL with the
emulator or the load. `served(build)` starts it on a free loopback port and yields its URL."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection

from aiohttp import web


def _serve(build: Callable[[], web.Application], conn: Connection) -> None:
    async def serve() -> None:
        runner = web.AppRunner(build(), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        conn.send(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(serve())


@contextmanager
def served(build: Callable[[], web.Application]) -> Iterator[str]:
    """`build` runs in the child (a module-level function), so the app's state lives there."""
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.Process(target=_serve, args=(build, child), daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{parent.recv()}"
    finally:
        process.terminate()
        process.join(5)
