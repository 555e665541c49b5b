"""The Emulator: everything one running instance owns. Handlers reach it as `request.app.state.emu`.

The clock is state like the rows: every change is written to `meta` (with the next commit), and opening
a database file restores it — a frozen clock stands where it stood, an advanced one keeps its offset —
and then moves it up to the newest stored timestamp, so time never runs backwards across a restart.
`reset` returns to the configured clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from emulator.core.accounts import migrate_key_named_accounts
from emulator.core.clock import Clock, from_db
from emulator.core.config import Settings
from emulator.core.db import Database, Tx
from emulator.core.events import EventBus
from emulator.core.ids import IdFactory
from emulator.core.jobs import JobRunner

ResetHook = Callable[["Emulator"], Awaitable[None]]
# How long a stop (SIGTERM, SIGINT) lets work under way finish: HTTP requests, an SMTP message's DATA.
# What is still running then is abandoned; nothing it did was acknowledged (issue 38).
STOP_GRACE_SECONDS = 5.0


class Emulator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.clock = Clock(settings.clock, settings.clock_start)
        self.ids = IdFactory(settings.seed)
        self.db = Database(settings.db)
        self.events = EventBus()
        self.jobs = JobRunner(self)
        # Per-feature in-memory state (key ring, idempotency in flight, faults) registers here.
        self.state: dict[str, Any] = {}
        self.ddl: list[str] = []
        # Small read-mostly facts consulted on every event (webhook subscriptions, receiving domains),
        # dropped whenever their tables change, on reset and on snapshot restore.
        self.cache: dict[str, Any] = {}
        self.reset_hooks: list[ResetHook] = [self._clear_cache]
        # Run once, on the loop, when a stop begins (`begin_stop`): live UI streams end, SMTP stops accepting.
        self.stop_hooks: list[Callable[[], None]] = []
        self.stop_deadline: float | None = None  # time.monotonic() by which work under way is abandoned
        self.clock.on_change(self.jobs.wake)
        self.clock.on_change(self._save_clock)

    def _save_clock(self) -> None:
        self.db.defer("INSERT OR REPLACE INTO meta (key, value) VALUES ('clock', ?)",
                      (json.dumps(self.clock.export()),), latest="clock")

    async def _restore_clock(self, tx: Tx) -> None:
        row = await tx.one("SELECT value FROM meta WHERE key = 'clock'")
        if row is not None:
            self.clock.load(json.loads(row["value"]))
        newest = await _newest_timestamp(tx, self.db.tables)
        if newest is not None:
            self.clock.not_before(newest)

    async def _clear_cache(self, _: Emulator) -> None:
        self.cache.clear()

    @property
    def stopping(self) -> bool:
        return self.stop_deadline is not None

    def begin_stop(self) -> None:
        """The stop has begun: what accepts new work stops accepting, what never ends by itself (a live
        UI stream) ends now, and work under way has until `stop_deadline` (the lifespan's stop follows)."""
        if self.stop_deadline is not None:
            return
        self.stop_deadline = time.monotonic() + STOP_GRACE_SECONDS
        for hook in list(self.stop_hooks):
            hook()

    def invalidate(self, name: str) -> None:
        self.cache.pop(name, None)

    async def open(self, ddl: list[str]) -> None:
        self.ddl = ddl  # kept for snapshot restore, which recreates tables an older file lacks
        await self.db.open(ddl)
        if self.db.fresh:
            return  # nothing stored yet: no id sequence, clock or timestamp to take up again
        seed = self.settings.seed
        async with self.db.exclusive():  # before anything reads an account (issue 36)
            await self.db.call(lambda raw: migrate_key_named_accounts(raw, seed))
        async with self.transaction() as tx:
            rows = await tx.all("SELECT key, value FROM meta WHERE key LIKE 'id_counter%'")
            await self._restore_clock(tx)
        self.ids.load_counters({row["key"]: row["value"] for row in rows})

    def transaction(self, account: str | None = None, long: bool = False,
                    turn: bool = True) -> AbstractAsyncContextManager[Tx]:
        # Not wrapped again: one object less per request. `long`: a chunked job's; `turn`: see db.py.
        return self.db.transaction(self, account, long, turn)

    async def reset(self) -> None:
        """Back to a fresh start: empty tables, the seed's id sequence, the configured clock and keys."""
        # Paused: a job started from the old state must not write into the new one.
        async with self.jobs.paused(), self.db.exclusive():
            await self.db.wipe()
            self.ids.load_counters({})
        self.clock.reset()
        for hook in self.reset_hooks:
            await hook(self)


async def _newest_timestamp(tx: Tx, tables: list[str]) -> datetime | None:
    """The latest `created_at` of the newest row (by `seq`) of each table that has both columns."""
    newest: datetime | None = None
    for table in tables:
        columns = {row["name"] for row in await tx.all(f"PRAGMA table_info({table})")}
        if not {"seq", "created_at"} <= columns:
            continue
        row = await tx.one(f"SELECT created_at FROM {table} ORDER BY seq DESC LIMIT 1")
        try:
            stamp = from_db(row["created_at"]) if row and row["created_at"] else None
        except (TypeError, ValueError):
            continue  # a table keeping another form of time
        if stamp is not None and (newest is None or stamp > newest):
            newest = stamp
    return newest
