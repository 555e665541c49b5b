"""Tables of custom events, automations and their runs (reference logs-automations-events.md §2, §3)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db
from emulator.core.errors import not_found

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS event_definitions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        schema TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS event_definitions_name ON event_definitions (account, name)",
    # steps / connections: the JSON lists as given (the active version).
    """CREATE TABLE IF NOT EXISTS automations (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        trigger_event TEXT NOT NULL,
        steps TEXT NOT NULL,
        connections TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    # A run keeps the graph it started with; `waiting_*` name the wait_for_event step it sits in.
    """CREATE TABLE IF NOT EXISTS automation_runs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        automation_id TEXT NOT NULL,
        contact_id TEXT,
        payload TEXT NOT NULL,
        steps TEXT NOT NULL,
        connections TEXT NOT NULL,
        status TEXT NOT NULL,
        waiting_event TEXT,
        waiting_key TEXT,
        started_at TEXT,
        completed_at TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS automation_runs_by_automation ON automation_runs (account, automation_id)",
    """CREATE TABLE IF NOT EXISTS automation_run_steps (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        run_id TEXT NOT NULL,
        key TEXT NOT NULL,
        type TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT,
        completed_at TEXT,
        output TEXT,
        error TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS automation_run_steps_by_run ON automation_run_steps (run_id)",
]


def millis(value: str | None) -> str | None:
    """`YYYY-MM-DD HH:MM:SS.mmm+00`, the timestamp form of these objects [openapi examples]."""
    if value is None:
        return None
    return from_db(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"


def loads(text: str | None) -> Any:
    return json.loads(text) if text else None


async def require_automation(tx: Tx, automation_id: str) -> Row:
    row = await tx.one("SELECT * FROM automations WHERE account = ? AND id = ?", (tx.account, automation_id))
    if row is None:
        raise not_found("Automation")
    return row
