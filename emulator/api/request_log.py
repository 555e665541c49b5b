"""A record of every authenticated API request, kept for the Logs endpoints (logs-automations-events.md §1).

Rows are written lazily (with the next transaction), so logging never adds a commit to a request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.core.clock import to_db
from emulator.core.ids import IdFactory

if TYPE_CHECKING:
    from starlette.requests import Request

    from emulator.api.auth import Credential
    from emulator.core.emulator import Emulator

TABLES = [
    """CREATE TABLE IF NOT EXISTS request_logs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        created_at TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        method TEXT NOT NULL,
        response_status INTEGER NOT NULL,
        user_agent TEXT,
        request_body TEXT,
        response_body TEXT
    )""",
]
# Larger request bodies (attachments) are not copied into the log.
MAX_LOGGED_BODY = 64 * 1024
INSERT = ("INSERT INTO request_logs (id, account, created_at, endpoint, method, response_status,"
          " user_agent, request_body, response_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def log_ids(emu: Emulator) -> IdFactory:
    ids = emu.state.get("log_ids")
    if ids is None:
        ids = emu.state["log_ids"] = IdFactory(emu.settings.seed, stream="log")
    return ids  # type: ignore[no-any-return]


def _request_body(request: Request) -> str | None:
    """The JSON body as sent (only bodies that parsed are kept: see http.read_json)."""
    raw: bytes | None = getattr(request.state, "json_body", None)
    if not raw or len(raw) > MAX_LOGGED_BODY:
        return None
    return raw.decode()


def record(emu: Emulator, request: Request, credential: Credential | None, status: int,
           response_body: bytes) -> None:
    """Queue the log row; `response_body` is the JSON exactly as answered."""
    if credential is None:
        return
    emu.db.defer(INSERT, (
        log_ids(emu).uuid(), credential.account, to_db(emu.clock.now()), request.scope["path"],
        request.method, status, request.headers.get("user-agent"), _request_body(request),
        response_body.decode() if len(response_body) <= MAX_LOGGED_BODY else None,
    ))


async def start(emu: Emulator) -> None:
    """Continue the log id stream after a restart with a file database (ids are UNIQUE)."""
    async with emu.transaction() as tx:
        row = await tx.one("SELECT seq FROM sqlite_sequence WHERE name = 'request_logs'")
    log_ids(emu).counter = int(row["seq"]) if row else 0
