"""Serve one app for a benchmark on uvicorn with uvloop + httptools, on 127.0.0.1 port 0.

    python -m benchmarks.serve_app emulator DB_PATH API_KEY [CLOCK]
    python -m benchmarks.serve_app ceiling DB_PATH

Prints `PORT <n>` once the app is ready. `ceiling` is the measuring stick of issue 3: a minimal
Starlette app whose one JSON endpoint writes one row to SQLite through aiosqlite (WAL,
synchronous=NORMAL, one commit per request), i.e. the least any stored POST /emails must do.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def ceiling_app(path: str) -> Starlette:
    state: dict[str, Any] = {"lock": asyncio.Lock()}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        db = await aiosqlite.connect(path)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("CREATE TABLE IF NOT EXISTS emails (seq INTEGER PRIMARY KEY, id TEXT, body TEXT)")
        state["db"] = db
        yield
        await db.close()

    async def create(request: Request) -> JSONResponse:
        body = await request.json()
        email_id = str(uuid.uuid4())
        async with state["lock"]:
            await state["db"].execute("INSERT INTO emails (id, body) VALUES (?, ?)",
                                      (email_id, json.dumps(body)))
            await state["db"].commit()
        return JSONResponse({"id": email_id})

    return Starlette(routes=[Route("/emails", create, methods=["POST"])], lifespan=lifespan)


def emulator_app(path: str, api_key: str, clock: str = "real") -> Starlette:
    from emulator.app import create_app
    from emulator.cli import tune_for_serving
    from emulator.core.config import Settings

    app = create_app(Settings(db=path, api_keys=[api_key], smtp=False, quiet=True, clock=clock))
    # As the `resend-emulator` command runs it.
    app.state.emu.state["on_ready"] = lambda emu: tune_for_serving()
    return app


def main() -> None:
    kind, path = sys.argv[1], sys.argv[2]
    app = ceiling_app(path) if kind == "ceiling" else emulator_app(path, *sys.argv[3:5])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before uvicorn starts: early connections wait in the backlog until the app's startup
    # has finished, so the port can be announced at once.
    sock.listen(2048)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    # The emulator speaks as `resend-emulator` serves it; the ceiling as plain uvicorn.
    http: Any = "httptools"
    if kind != "ceiling":
        from emulator.core.wire import WholeResponses
        http = WholeResponses
    config = uvicorn.Config(app, loop="uvloop", http=http, log_level="error", access_log=False,
                            lifespan="on")
    server = uvicorn.Server(config)
    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(server.serve(sockets=[sock]))

if __name__ == "__main__":
    main()
