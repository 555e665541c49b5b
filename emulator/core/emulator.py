"""The Emulator: everything one running instance owns. Handlers reach it as `request.app.state.emu`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from emulator.core.clock import Clock
from emulator.core.config import Settings
from emulator.core.db import Database, Tx
from emulator.core.events import EventBus
from emulator.core.ids import IdFactory
from emulator.core.jobs import JobRunner

ResetHook = Callable[["Emulator"], Awaitable[None]]


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
        self.clock.on_change(self.jobs.wake)

    async def _clear_cache(self, _: Emulator) -> None:
        self.cache.clear()

    def invalidate(self, name: str) -> None:
        self.cache.pop(name, None)

    async def open(self, ddl: list[str]) -> None:
        self.ddl = ddl  # kept for snapshot restore, which recreates tables an older file lacks
        await self.db.open(ddl)
        async with self.transaction() as tx:
            rows = await tx.all("SELECT key, value FROM meta WHERE key LIKE 'id_counter%'")
        self.ids.load_counters({row["key"]: row["value"] for row in rows})

    def transaction(self, account: str | None = None) -> AbstractAsyncContextManager[Tx]:
        return self.db.transaction(self, account)  # not wrapped again: one generator less per request

    async def reset(self) -> None:
        """Back to a fresh start: empty tables, the seed's id sequence, the configured clock and keys."""
        # Paused: a job started from the old state must not write into the new one.
        async with self.jobs.paused(), self.db.exclusive():
            await self.db.wipe()
            self.ids.load_counters({})
        self.clock.reset()
        for hook in self.reset_hooks:
            await hook(self)
