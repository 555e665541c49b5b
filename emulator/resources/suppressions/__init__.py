"""The account suppression list and its API. Reference: reference/suppressions.md.

Modules: `store` (the table, lookups, add/remove that emit `suppression.*`), `service` (the API).

Public functions for other groups (scoped to `tx.account`):
- `lookup(tx, emails) -> {normalized address: Row}` — the suppressed ones among `emails`.
- `add(tx, email, origin, source_id=None) -> Row` — idempotent; emits `suppression.added`.
- `normalize(email) -> str` — the form addresses are stored and compared in.
"""

from __future__ import annotations

from emulator.resources.suppressions import service, store
from emulator.resources.suppressions.store import add, find, lookup, normalize

TABLES = store.TABLES
OPS = service.OPS

__all__ = ["OPS", "TABLES", "add", "find", "lookup", "normalize"]
