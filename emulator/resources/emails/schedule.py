"""`scheduled_at`: ISO 8601 or the documented natural-language forms, at most 30 days ahead.

Grammar [rec, emails.md "Scheduling rules"]: `now`; `in N <unit>` (sec/min/hour/day/week and plurals);
`today|tomorrow [at H[:MM][am|pm]] [TZ]`; `<weekday> [at H[:MM][am|pm]] [TZ]` (the next such day,
a week ahead when it is today and the hour has passed). A missing time means 09:00 [rec]; a missing
zone means UTC. Times a few seconds in the past are sent at once; earlier ones are refused.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

from emulator.core.errors import ApiError, invalid
from emulator.core.typed import instant

MAX_AHEAD = timedelta(days=30)
PAST_GRACE = timedelta(seconds=60)
UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
}
ZONES = {
    "UTC": "UTC", "GMT": "UTC", "Z": "UTC",
    "ET": "America/New_York", "EST": "America/New_York", "EDT": "America/New_York",
    "CT": "America/Chicago", "CST": "America/Chicago", "CDT": "America/Chicago",
    "MT": "America/Denver", "MST": "America/Denver", "MDT": "America/Denver",
    "PT": "America/Los_Angeles", "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
    "BST": "Europe/London", "CET": "Europe/Paris", "CEST": "Europe/Paris",
}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
RELATIVE = re.compile(r"^in\s+([0-9]+)\s*([a-z]+)$")
# Past the limit by a day: what `in N units` means when N is too large to be worth adding to a date
# (issue 11: "in 99999999999999999999 days" overflowed the date arithmetic).
TOO_FAR = MAX_AHEAD + timedelta(days=1)
DAY_AT = re.compile(
    r"^(?P<day>today|tomorrow|(?:next\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
    r"(?:\s+at\s+(?P<hour>[0-9]{1,2})(?::(?P<minute>[0-9]{2}))?\s*(?P<ampm>am|pm)?)?"
    r"(?:\s+(?P<zone>[a-z]{1,4}|[a-z]+/[a-z_]+))?$"
)
INVALID = ("Invalid `scheduled_at` field. Use an ISO 8601 date (e.g. `2026-08-05T11:52:01.858Z`) or"
           " natural language (e.g. `in 1 hour`, `tomorrow at 9am`, `Friday at 3pm ET`).")


def requested_schedule(body: dict[str, object]) -> object:
    """The body's `scheduled_at`, None when it asks for no schedule: absent, null, or `""`, which
    Resend's Go SDK sends on every "send now" (its field has no `omitempty`; issue 36)."""
    value = body.get("scheduled_at")
    return None if value == "" else value


def parse_scheduled_at(value: object, now: datetime) -> datetime:
    """The absolute UTC time `value` names (`""`: now, see `requested_schedule`); raises 422
    validation_error when unusable."""
    if value == "":
        return now
    if not isinstance(value, str) or not value.strip():
        raise invalid(INVALID)
    when = _natural(value.strip().lower(), now)
    if when is None:
        try:  # the years 1–9999 in UTC: `0001-01-01T00:00:00+01:00` parses but has no UTC form
            when = instant(value, "scheduled_at")
        except ApiError:
            raise invalid(INVALID) from None
    when = when.astimezone(UTC)
    if when < now - PAST_GRACE:
        raise invalid("Invalid `scheduled_at` field. The date must be in the future.")
    if when > now + MAX_AHEAD:
        raise invalid("Invalid `scheduled_at` field. Emails can be scheduled at most 30 days in advance.")
    return max(when, now)


def _natural(text: str, now: datetime) -> datetime | None:
    text = re.sub(r"\s+", " ", text)
    if text == "now":
        return now
    relative = RELATIVE.match(text)
    if relative:
        seconds = UNITS.get(relative.group(2))
        if seconds is None:
            return None
        digits = relative.group(1).lstrip("0") or "0"
        if len(digits) > 10 or int(digits) * seconds > TOO_FAR.total_seconds():
            return now + TOO_FAR
        return now + timedelta(seconds=int(digits) * seconds)
    match = DAY_AT.match(text)
    if not match:
        return None
    zone = _zone(match.group("zone"))
    if zone is None:
        return None
    hour, minute = _hour(match.group("hour"), match.group("minute"), match.group("ampm"))
    if hour is None:
        return None
    local_now = now.astimezone(zone)
    day = match.group("day").removeprefix("next ")
    candidate = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if day == "tomorrow":
        candidate += timedelta(days=1)
    elif day != "today":
        ahead = (WEEKDAYS.index(day) - local_now.weekday()) % 7
        candidate += timedelta(days=ahead)
        if candidate <= local_now:
            candidate += timedelta(days=7)
    # Re-attach the zone so a DST change between today and the target day is respected.
    return candidate.replace(tzinfo=None).replace(tzinfo=zone)


def _zone(name: str | None) -> tzinfo | None:
    if name is None:
        return UTC
    key = ZONES.get(name.upper())
    if key is None and "/" in name:
        key = "/".join("_".join(word.capitalize() for word in part.split("_")) for part in name.split("/"))
    from zoneinfo import ZoneInfo  # here: zoneinfo is ~3 ms of the start, and few sends name a zone

    try:
        return ZoneInfo(key) if key else None
    except (KeyError, ValueError):
        return None


def _hour(hour: str | None, minute: str | None, ampm: str | None) -> tuple[int | None, int]:
    if hour is None:
        return 9, 0
    h, m = int(hour), int(minute or 0)
    if ampm:
        if not 1 <= h <= 12:
            return None, 0
        h = h % 12 + (12 if ampm == "pm" else 0)
    if h > 23 or m > 59:
        return None, 0
    return h, m
