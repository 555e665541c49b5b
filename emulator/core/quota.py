"""Each account's email quota use: emails counted today and this month (UTC, on the emulator clock).

What the real service sends as `x-resend-daily-quota` / `x-resend-monthly-quota` on successful answers,
and what `--daily-quota N` / `--monthly-quota N` refuse sends past (429 `daily_quota_exceeded` /
`monthly_quota_exceeded`). As documented (account-quotas-and-limits), each to/cc/bcc recipient of a
sent email counts as one email, and so does each received email.

Counted in memory, O(1) per request: the counts are read from the database once per account (and again
only when the clock moves back to an earlier day), then every send adds to them. A send counts once its
transaction commits; until then it is in flight, and counts only against later sends' quota checks (a
rolled-back send is forgotten with its transaction).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary, ref

from emulator.core import errors
from emulator.core.errors import ApiError

if TYPE_CHECKING:
    from emulator.core.db import Host, Tx

LOADER = "quota_loader"  # emu.state: reads an account's use from its rows (resources/emails/quota.py)
CACHE = "send_quota"  # emu.cache is cleared by a reset or a snapshot restore: counts are read again
DAILY_HEADER, MONTHLY_HEADER = "x-resend-daily-quota", "x-resend-monthly-quota"


@dataclass
class Usage:
    day: str  # `2026-05-14`
    month: str  # `2026-05`
    daily: int
    monthly: int
    in_flight: WeakKeyDictionary[object, int] = field(default_factory=WeakKeyDictionary)  # by `tx.unit`

    def headers(self) -> dict[str, str]:
        return {DAILY_HEADER: str(self.daily), MONTHLY_HEADER: str(self.monthly)}


def periods(now: datetime) -> tuple[str, str]:
    """(`YYYY-MM-DD`, `YYYY-MM`) of `now` in UTC."""
    return _periods(now.astimezone(UTC).date() if now.tzinfo is not UTC else now.date())


@lru_cache(maxsize=64)
def _periods(day: date) -> tuple[str, str]:
    # Cached by day: every send asks it twice, of a `now` that differs each time on a running clock.
    text = day.isoformat()
    return text, text[:7]


def _book(emu: Host) -> dict[str, Usage]:
    book: dict[str, Usage] | None = emu.cache.get(CACHE)
    if book is None:
        book = emu.cache[CACHE] = {}
    return book


def current(emu: Host, account: str, now: datetime) -> Usage | None:
    """The account's use for `now`'s day and month; None when it must be read from the database first.
    A later day or month starts from zero (every send since was counted as it happened); an earlier one
    (the clock was set back) has to be read again."""
    usage = _book(emu).get(account)
    if usage is None:
        return None
    day, month = periods(now)
    if (day, month) < (usage.day, usage.month):
        return None
    if month != usage.month:
        usage.monthly = 0
    if day != usage.day:
        usage.daily = 0
    usage.day, usage.month = day, month
    return usage


def load(emu: Host, account: str, now: datetime, daily: int, monthly: int) -> Usage:
    day, month = periods(now)
    usage = _book(emu)[account] = Usage(day, month, daily, monthly)
    return usage


def check(emu: Host, usage: Usage, count: int) -> None:
    """429 when `count` more emails would pass a configured quota (nothing is counted)."""
    settings = emu.settings
    if settings.daily_quota or settings.monthly_quota:
        in_flight = sum(usage.in_flight.values()) + count
        if settings.daily_quota and usage.daily + in_flight > settings.daily_quota:
            raise ApiError(errors.DAILY_QUOTA_EXCEEDED)
        if settings.monthly_quota and usage.monthly + in_flight > settings.monthly_quota:
            raise ApiError(errors.MONTHLY_QUOTA_EXCEEDED)


def spend(emu: Host, tx: Tx, usage: Usage, count: int, enforce: bool = True) -> None:
    """Count `count` emails of the account in `tx` (once it commits); past a configured quota, 429."""
    if enforce:
        check(emu, usage, count)
    unit = tx.unit
    first = unit not in usage.in_flight
    usage.in_flight[unit] = usage.in_flight.get(unit, 0) + count
    if first:
        handle = ref(unit)  # a weak one: a rolled-back transaction is freed, and its count with it
        tx.after_commit(lambda: _commit(usage, handle()))


def _commit(usage: Usage, unit: object | None) -> None:
    spent = usage.in_flight.pop(unit, 0) if unit is not None else 0
    usage.daily += spent
    usage.monthly += spent


def headers(emu: Host, account: str, now: datetime) -> dict[str, str]:
    """The two quota headers, when the account's use is known (it is after its first send)."""
    usage = current(emu, account, now)
    return usage.headers() if usage is not None else {}
