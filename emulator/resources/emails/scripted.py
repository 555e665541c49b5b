"""Scripted delivery outcomes for tests: "the next email to this address (or this email) bounces / is
delayed / fails / gets a complaint" (control plane `POST /_emulator/outcomes`, see README).

A script is used once, by the delivery outcome of the first email that matches it after it was added;
the delivery simulation (`outcomes.py`) turns it into exactly the events the real service would send.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.core import validate
from emulator.core.addresses import address_of
from emulator.core.errors import invalid
from emulator.resources.emails.bounces import SUBTYPES, TYPES

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS scripted_outcomes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        email_id TEXT,
        address TEXT,
        outcome TEXT NOT NULL,
        minutes REAL,
        reason TEXT,
        bounce_type TEXT,
        bounce_subtype TEXT,
        created_at TEXT NOT NULL
    )""",
]
OUTCOMES = ("delivered", "delivery_delayed", "failed", "bounced", "complained")
CACHE = "scripted_accounts"
DEFAULT_DELAY_MINUTES = 60
DEFAULT_FAILURE = "reached_daily_quota"  # the example reason of webhooks.md §6.2


def _target(body: dict[str, Any]) -> tuple[str | None, str | None]:
    email_id, address = validate.string(body, "email_id"), validate.string(body, "to")
    if (email_id is None) == (address is None):
        raise invalid("Give exactly one of `to` (an address) or `email_id`.")
    return email_id, address.strip().lower() if address else None


def _details(body: dict[str, Any], outcome: str) -> dict[str, Any]:
    minutes = body.get("minutes", DEFAULT_DELAY_MINUTES if outcome == "delivery_delayed" else None)
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, int | float)
                                or not 0 <= minutes <= 60 * 24 * 30):
        raise invalid("`minutes` must be a number between 0 and 43200.")
    bounce_type = validate.one_of(body, "bounce_type", TYPES)
    reason = validate.string(body, "reason")
    return {"minutes": minutes,
            "reason": reason or (DEFAULT_FAILURE if outcome == "failed" else None),
            "bounce_type": bounce_type or ("Permanent" if outcome == "bounced" else None),
            "bounce_subtype": validate.one_of(body, "bounce_subtype", SUBTYPES)}


def serialize(row: Row) -> dict[str, Any]:
    return {key: row[key] for key in ("id", "email_id", "outcome", "minutes", "reason", "bounce_type",
                                      "bounce_subtype")} | {"to": row["address"]}


async def add_script(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    outcome = validate.one_of(body, "outcome", OUTCOMES)
    if outcome is None:
        raise invalid(f"`outcome` is required: one of {', '.join(OUTCOMES)}.")
    email_id, address = _target(body)
    row = {"id": tx.new_id(), "account": tx.account, "email_id": email_id, "address": address,
           "outcome": outcome, **_details(body, outcome), "created_at": tx.now_db}
    await tx.insert("scripted_outcomes", row)
    _changed(tx)
    return serialize(row)


async def list_scripts(tx: Tx) -> list[dict[str, Any]]:
    rows = await tx.all("SELECT * FROM scripted_outcomes WHERE account = ? ORDER BY seq", (tx.account,))
    return [serialize(row) for row in rows]


async def clear_scripts(tx: Tx) -> None:
    await tx.run("DELETE FROM scripted_outcomes WHERE account = ?", (tx.account,))
    _changed(tx)


def _changed(tx: Tx) -> None:
    emu = tx.emu
    emu.invalidate(CACHE)
    tx.after_commit(lambda: emu.invalidate(CACHE))


async def _accounts(tx: Tx) -> set[str]:
    # Every delivery outcome asks; without scripts (the usual case) the answer comes from memory.
    accounts = tx.emu.cache.get(CACHE)
    if accounts is None:
        rows = await tx.all("SELECT DISTINCT account FROM scripted_outcomes")
        accounts = tx.emu.cache[CACHE] = {row["account"] for row in rows}
    return accounts  # type: ignore[no-any-return]


async def take_scripts(tx: Tx, email_id: str, addresses: list[str]) -> dict[str, Row]:
    """The scripts this email's delivery uses, by recipient address, each consumed: a script for the
    email covers all its recipients; otherwise each recipient takes the oldest script for its address."""
    if tx.account not in await _accounts(tx):
        return {}
    rows = await tx.all("SELECT * FROM scripted_outcomes WHERE account = ?"
                        " AND (email_id = ? OR email_id IS NULL) ORDER BY seq", (tx.account, email_id))
    for_email = next((row for row in rows if row["email_id"] == email_id), None)
    chosen: dict[str, Row] = {}
    used: set[str] = set()
    for address in addresses:
        bare = address_of(address).lower()
        match = for_email or next(
            (row for row in rows if row["address"] == bare and row["id"] not in used), None)
        if match is not None:
            chosen[address] = match
            used.add(match["id"])
    for script_id in used:
        tx.queue("DELETE FROM scripted_outcomes WHERE id = ?", (script_id,))
    if used:
        _changed(tx)
    return chosen
