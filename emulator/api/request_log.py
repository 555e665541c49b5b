"""A record of every authenticated API request, kept for the Logs endpoints (logs-automations-events.md §1).

Rows are written lazily (with the next transaction), so logging never adds a commit to a request.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Any

from emulator.core.ids import IdFactory
from emulator.core.jsontext import compact

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.api.ops import ApiCall
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
COUNTER_KEY = "log_counter"
COUNTER_UPSERT = f"INSERT OR REPLACE INTO meta (key, value) VALUES ('{COUNTER_KEY}', ?)"
# Larger request bodies (attachments) are not copied into the log.
MAX_LOGGED_BODY = 64 * 1024
INSERT = ("INSERT INTO request_logs (id, account, created_at, endpoint, method, response_status,"
          " user_agent, request_body, response_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def log_ids(emu: Emulator) -> IdFactory:
    ids = emu.state.get("log_ids")
    if ids is None:
        ids = emu.state["log_ids"] = IdFactory(emu.settings.seed, stream="log")
    return ids  # type: ignore[no-any-return]


# Keys whose values are credentials: never stored in a log body (API key tokens, webhook and OAuth secrets).
SECRET_KEYS = frozenset({"token", "signing_secret", "client_secret", "refresh_token", "access_token",
                         "code_verifier", "password", "api_key"})
_MARKERS = tuple(f'"{key}"' for key in SECRET_KEYS)
REDACTED = "[redacted]"
_MARKER = re.compile("|".join(re.escape(marker) for marker in _MARKERS))


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: REDACTED if key in SECRET_KEYS and value[key] is not None else _scrub(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


def redact(raw: bytes) -> str | None:
    """The body as text with every credential replaced; None when too large to keep."""
    if len(raw) > MAX_LOGGED_BODY:
        return None
    # A body that starts with a BOM parses as JSON, so it is logged without one; otherwise every later
    # reader of the log (GET /logs/{id}, the Logs page) would find text that does not parse. Cut by hand:
    # the `utf-8-sig` codec is Python code, ~10x slower than `utf-8` on a send's body.
    text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8", "replace")
    if _MARKER.search(text) is None:
        return text  # the common case costs a few substring checks, no parse
    try:
        return compact(_scrub(json.loads(text)))
    except ValueError:
        return None


def _request_body(request: ApiCall) -> str | None:
    """The JSON body as sent (only bodies that parsed are kept: see http.read_json)."""
    raw = request.json_body
    return redact(raw) if raw else None


def record(emu: Emulator, request: ApiCall, credential: Credential | None, status: int,
           response_body: bytes) -> None:
    """Queue the log row; `response_body` is the JSON exactly as answered."""
    if credential is None:
        return
    ids = log_ids(emu)
    log_id = ids.uuid()
    # The counter travels with the rows (one write per commit however many requests): a snapshot, a
    # restore or a restart continues after every id ever handed out, never before one.
    emu.db.defer(COUNTER_UPSERT, (str(ids.counter),), latest=COUNTER_KEY)
    emu.db.defer(INSERT, (
        log_id, credential.account, request.now_db, request.scope["path"],
        request.method, status, request.headers.get("user-agent"), _request_body(request),
        redact(response_body),
    ))


async def start(emu: Emulator) -> None:
    """Continue the log id stream after a restart or a restore: past every id this process handed out
    and every id the database has seen (ids are UNIQUE)."""
    async with emu.transaction() as tx:
        seq = await tx.one("SELECT seq FROM sqlite_sequence WHERE name = 'request_logs'")
        saved = await tx.one("SELECT value FROM meta WHERE key = ?", (COUNTER_KEY,))
    ids = log_ids(emu)
    ids.counter = max(ids.counter, int(seq["seq"]) if seq else 0, int(saved["value"]) if saved else 0)
