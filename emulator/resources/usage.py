"""GET /usage: the account's usage counted from its rows on the emulator clock (the official SDKs'
`Usage.get` types and the docs' retrieve-usage page; not in the reference). Windows are the UTC day and
month of the emulator clock, as for the quota headers.

`emails.*.used` is what counts against the quota, the figure `x-resend-daily-quota` and
`x-resend-monthly-quota` carry (each to/cc/bcc recipient of a sent email, each received email);
`sent` and `received` count emails. Limits are the Free plan's published quotas, or the ones the
emulator enforces (`--daily-quota`, `--monthly-quota`); the others are figures only (a `None` limit where
the SDK allows "unlimited"). The rate limit is the one the API answers with.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.api.ratelimit import ADVERTISED_LIMIT
from emulator.core.clock import iso_z, to_db
from emulator.resources.emails import quota_usage

if TYPE_CHECKING:
    from emulator.core.db import Tx

# The Free plan's quotas: 100 emails a UTC day and 3,000 a month (reference 00-general.md §5).
DAILY_EMAILS, MONTHLY_EMAILS, CONTACTS, AUTOMATION_RUNS = 100, 3000, 1000, 1000


def _windows(now: datetime) -> tuple[datetime, datetime, datetime, datetime]:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    month = day.replace(day=1)
    next_month = (month + timedelta(days=32)).replace(day=1)
    return day, day + timedelta(days=1), month, next_month


async def _count(tx: Tx, table: str, where: str = "", *params: Any) -> int:
    if table not in tx.db.tables:
        return 0
    row = await tx.one(f"SELECT count(*) AS n FROM {table} WHERE account = ? {where}", (tx.account, *params))
    return int(row["n"]) if row else 0


async def _emails(tx: Tx, used: int, since: datetime, resets: datetime) -> dict[str, Any]:
    sent = await _count(tx, "emails", "AND created_at >= ?", to_db(since))
    received = await _count(tx, "received_emails", "AND created_at >= ?", to_db(since))
    return {"used": used, "sent": sent, "received": received, "resets_at": iso_z(resets)}


async def get_usage(tx: Tx) -> dict[str, Any]:
    day, next_day, month, next_month = _windows(tx.now)
    settings = tx.emu.settings
    quota = await quota_usage(tx)
    return {
        "object": "usage",
        "generated_at": iso_z(tx.now),
        "emails": {
            "daily": {**await _emails(tx, quota.daily, day, next_day),
                      "limit": settings.daily_quota or DAILY_EMAILS},
            "monthly": {**await _emails(tx, quota.monthly, month, next_month),
                        "limit": settings.monthly_quota or MONTHLY_EMAILS},
        },
        "contacts": {"used": await _count(tx, "contacts"), "limit": CONTACTS},
        "segments": {"used": await _count(tx, "segments"), "limit": None},
        "broadcasts": {
            "used": await _count(tx, "broadcasts", "AND sent_at >= ?", to_db(month)),
            "limit": None,
        },
        "ai_credits": {"used": 0, "limit": None, "next_increase_at": None},
        "automation_runs": {
            "used": await _count(tx, "automation_runs", "AND created_at >= ?", to_db(month)),
            "limit": AUTOMATION_RUNS,
            "resets_at": iso_z(next_month),
        },
        "domains": {"used": await _count(tx, "domains"), "limit": None},
        "rate_limit": {"limit": settings.rate_limit or ADVERTISED_LIMIT, "duration": "1000ms"},
    }


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_usage(tx)


# Not in the OpenAPI document: the SDKs' path and name.
OPS = [Op("usage/get", "GET", "/usage", http_get)]
