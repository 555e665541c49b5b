"""The account's email quota use, read from its rows when not yet in memory (core/quota.py counts it).

A sent email counts once per to/cc/bcc recipient, a received email once (account-quotas-and-limits).
This read happens once per account, and again only after a reset, a restore or a clock set back.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from emulator.core import quota
from emulator.core.clock import to_db

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.quota import Usage

_SENT = ("SELECT COALESCE(SUM(json_array_length(to_addrs) + COALESCE(json_array_length(cc), 0)"
         " + COALESCE(json_array_length(bcc), 0)), 0) AS n FROM emails"
         " WHERE account = ? AND created_at >= ? AND created_at < ?")
_RECEIVED = ("SELECT count(*) AS n FROM received_emails WHERE account = ? AND created_at >= ?"
             " AND created_at < ?")


def _windows(now: datetime) -> tuple[tuple[str, str], tuple[str, str]]:
    """The UTC day and month of `now`, as stored-form bounds (a clock set back sees no later mail)."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    month = day.replace(day=1)
    next_month = (month + timedelta(days=32)).replace(day=1)
    return (to_db(day), to_db(day + timedelta(days=1))), (to_db(month), to_db(next_month))


async def _used_in(tx: Tx, window: tuple[str, str]) -> int:
    total = 0
    for sql, table in ((_SENT, "emails"), (_RECEIVED, "received_emails")):
        if table in tx.db.tables:
            row = await tx.one(sql, (tx.account, *window))
            total += int(row["n"]) if row else 0
    return total


async def usage(tx: Tx) -> Usage:
    """The account's use today and this month, in memory from the first call on."""
    found = quota.current(tx.emu, tx.account, tx.now)
    if found is None:
        day, month = _windows(tx.now)
        found = quota.load(tx.emu, tx.account, tx.now, await _used_in(tx, day), await _used_in(tx, month))
    return found


async def spend(tx: Tx, count: int, enforce: bool = True) -> None:
    """Count `count` emails of the account; past a configured quota (and `enforce`), 429."""
    quota.spend(tx.emu, tx, await usage(tx), count, enforce)


async def check(tx: Tx, count: int) -> None:
    """429 when `count` more emails would pass a configured quota; counts nothing."""
    quota.check(tx.emu, await usage(tx), count)
