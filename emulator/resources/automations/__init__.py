"""Custom events and the automations they trigger. Reference: reference/logs-automations-events.md.

Modules: `store` (tables), `events` (event definitions, send-event), `graph` (step/connection validation,
durations), `service` (automations CRUD, duplicate, stop, runs), `conditions` (rule trees, `{var}`
references), `runner` (runs executing step by step on the clock).
"""

from __future__ import annotations

from typing import Any

from emulator.resources.automations import events, runner, service, store

TABLES = store.TABLES
OPS = [*events.OPS, *service.OPS]


def install(emu: Any) -> None:
    runner.install(emu)


__all__ = ["OPS", "TABLES", "install"]
