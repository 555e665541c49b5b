"""The time zone the UI shows times in (issue 39 item 9): UTC, the browser's own zone, or a named IANA
zone, remembered in a cookie like the theme and applied by the server wherever a page shows a time
(render.py's `when`, `iso` and `offset` filters), so pages need no JavaScript for it.

The browser's zone is known only to the browser: for it the server renders UTC and says so, and
static/zone.js rewrites each `<time>` in the browser's zone (without JavaScript the page says times are
in UTC). A cookie naming a zone this system does not know (tzdata changed, a hand-edited cookie) is
ignored, with a note: the times are then in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from functools import cache

ZONE_COOKIE = "emulator_ui_zone"
LOCAL = "local"
_NAME = re.compile(r"[A-Za-z0-9_+\-]{1,40}(?:/[A-Za-z0-9_+\-]{1,40}){0,3}")


@cache
def known_zones() -> tuple[str, ...]:
    """Every IANA zone name this system's tzdata has (read once: it lists a directory tree)."""
    from zoneinfo import available_timezones

    return tuple(sorted(available_timezones()))


def lookup(name: str) -> tzinfo | None:
    """The zone named `name` (`Asia/Tokyo`; `UTC` in any case), or None for a name tzdata lacks."""
    if name.upper() == "UTC":
        return UTC
    if not _NAME.fullmatch(name) or name not in known_zones():
        return None
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def offset_text(moment: datetime) -> str:
    """`+09:00`, `-03:30`; `UTC` where the offset is zero in UTC itself."""
    if moment.tzinfo is UTC:
        return "UTC"
    text = moment.strftime("%z")
    return f"{text[:3]}:{text[3:]}"


@dataclass(frozen=True)
class Zone:
    choice: str  # "UTC", LOCAL, or an IANA name
    tz: tzinfo  # what the server renders in: UTC for the browser's zone
    note: str | None = None

    @property
    def named(self) -> bool:
        return self.choice not in ("UTC", LOCAL)

    @property
    def short(self) -> str:
        """For column heads: `UTC`, `UTC+09:00`."""
        now = datetime.now(self.tz)
        return "UTC" if self.tz is UTC else f"UTC{offset_text(now)}"

    @property
    def label(self) -> str:
        """For sentences: `UTC`, `Asia/Tokyo (UTC+09:00)`."""
        return self.short if not self.named else f"{self.choice} ({self.short})"


def zone_of(cookie: str | None) -> Zone:
    chosen = (cookie or "UTC").strip()
    if chosen == LOCAL:
        return Zone(LOCAL, UTC)
    found = lookup(chosen)
    if found is None:
        return Zone("UTC", UTC, f"The saved time zone “{chosen[:60]}” is not one this system knows:"
                                " times are in UTC.")
    return Zone("UTC" if found is UTC else chosen, found)
