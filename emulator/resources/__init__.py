"""The registry of resource groups: one package (or module) each, all of the same shape.

Each offers TABLES (its DDL), OPS (its API operations) and, where it needs them, `install(emu)`,
`async start(emu)` and `async stop(emu)`. Adding a group = one package + one line here + its tests.
"""

from __future__ import annotations

from types import ModuleType

from emulator.resources import (
    api_keys,
    automations,
    broadcasts,
    contacts,
    domains,
    emails,
    inboxes,
    logs,
    oauth,
    receiving,
    suppressions,
    templates,
    usage,
    webhooks,
)

MODULES: list[ModuleType] = [
    api_keys,
    automations,
    broadcasts,
    contacts,
    domains,
    emails,
    inboxes,
    logs,
    oauth,
    receiving,
    suppressions,
    templates,
    usage,
    webhooks,
]
