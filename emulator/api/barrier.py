"""The last line: an exception no handler expected becomes Resend's 500 `application_error`, and the
connection stays open. A database with no room left says so in that 500's message.

Starlette's own last-resort middleware answers 500 and then re-raises, and uvicorn closes a
keep-alive connection on any exception that reaches it (issue 11: after one 500 the client's
connection was gone). Here the exception stops: logged once, answered once.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import ClientDisconnect

from emulator.api.ops import error_response
from emulator.core import errors
from emulator.core.errors import ApiError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("emulator")

# Resend's 500, whose message says what happened: SQLite refused a write for want of room.
FULL = ("The emulator's database is full (in memory it holds up to 1 GiB; a file, what its disk has room"
        " for). Nothing of this request was stored. Reset it (POST /_emulator/reset), keep fewer emails"
        " (--max-emails N), or keep state in a file (--db FILE).")


class Barrier:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except ClientDisconnect:  # gone before its whole body came (or closed by a stop): no one to answer
            return
        except Exception as exc:
            if started:  # half a response is out: only closing the connection can tell the client
                raise
            if _full(exc):
                log.error("the database is full: %s %s stored nothing", scope["method"], scope["path"])
                await error_response(ApiError(errors.APPLICATION_ERROR, FULL))(scope, receive, send)
                return
            log.exception("unhandled error on %s %s", scope["method"], scope["path"], exc_info=exc)
            await error_response(ApiError(errors.APPLICATION_ERROR))(scope, receive, send)


def _full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL: the in-memory database at its 1 GiB, or a disk with no room left."""
    return isinstance(exc, sqlite3.OperationalError) and "database or disk is full" in str(exc)
