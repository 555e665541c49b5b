"""The account suppression list (reference/suppressions.md): storage, lookups and the add/remove that emit.

The Suppressions API resource builds on these functions; the delivery simulation adds addresses after a
hard bounce or a complaint and consults the list before delivering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db
from emulator.core.events import emit

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS suppressions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email TEXT NOT NULL,
        origin TEXT NOT NULL,
        source_id TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS suppressions_email ON suppressions (account, email)",
]
ORIGINS = ("bounce", "complaint", "manual")


def normalize(email: str) -> str:
    return email.strip().lower()


def _created_at(row: Row) -> str:
    # Suppressions use millisecond precision: `YYYY-MM-DD HH:MM:SS.mmm+00` [openapi].
    return from_db(row["created_at"]).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"


def event_data(row: Row) -> dict[str, Any]:
    """`suppression.added/removed` payload: the suppression object without `object`."""
    return {"id": row["id"], "email": row["email"], "origin": row["origin"],
            "source_id": row["source_id"], "created_at": _created_at(row)}


def serialize(row: Row) -> dict[str, Any]:
    return {"object": "suppression", **event_data(row)}


async def find(tx: Tx, email: str) -> Row | None:
    return await tx.one("SELECT * FROM suppressions WHERE account = ? AND email = ?",
                        (tx.account, normalize(email)))


CACHE = "suppressing_accounts"


async def _accounts_with_entries(tx: Tx) -> set[str]:
    # Every delivery outcome asks; most accounts have an empty list, which this answers from memory.
    accounts = tx.emu.cache.get(CACHE)
    if accounts is None:
        rows = await tx.all("SELECT DISTINCT account FROM suppressions")
        accounts = tx.emu.cache[CACHE] = {row["account"] for row in rows}
    return accounts  # type: ignore[no-any-return]


def _changed(tx: Tx) -> None:
    emu = tx.emu
    emu.invalidate(CACHE)
    tx.after_commit(lambda: emu.invalidate(CACHE))


async def lookup(tx: Tx, emails: list[str]) -> dict[str, Row]:
    """The suppressions among `emails`, keyed by normalized address (one query at most)."""
    wanted = sorted({normalize(e) for e in emails})
    if not wanted or tx.account not in await _accounts_with_entries(tx):
        return {}
    marks = ",".join("?" for _ in wanted)
    rows = await tx.all(
        f"SELECT * FROM suppressions WHERE account = ? AND email IN ({marks})",
        (tx.account, *wanted),
    )
    return {row["email"]: row for row in rows}


async def add(tx: Tx, email: str, origin: str, source_id: str | None = None) -> Row:
    """Suppress `email`; an address already on the list keeps its entry (idempotent, [rec])."""
    existing = await find(tx, email)
    if existing is not None:
        return existing
    row = {"id": tx.new_id(), "account": tx.account, "email": normalize(email), "origin": origin,
           "source_id": source_id, "created_at": tx.now_db}
    await tx.insert("suppressions", row)
    _changed(tx)
    await emit(tx, "suppression.added", event_data(row), subject_id=row["id"])
    return row


async def remove(tx: Tx, row: Row) -> None:
    await tx.run("DELETE FROM suppressions WHERE id = ? AND account = ?", (row["id"], tx.account))
    _changed(tx)
    await emit(tx, "suppression.removed", event_data(row), subject_id=row["id"])
