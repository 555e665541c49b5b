"""What a person types as a number or a date, read within a range (issue 36).

`str.isdigit()` is true for `²` and `٣`, which `int()` then refuses or reads; a 23-digit number fits
Python's int but not SQLite's, and `0001-01-01T00:00:00+01:00` parses but has no UTC form. Each reader
here takes ASCII digits only, states its range, and answers out-of-range input with the same 422
`validation_error` and one sentence, so no caller meets ValueError or OverflowError.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from emulator.core.errors import invalid

# SQLite's INTEGER is a signed 64-bit number: the largest value a column or a bound parameter holds.
SQLITE_MAX = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,30}")
_DECIMAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,9})?")  # float() also takes `1e3`, `1_0`, `٣`, `inf`, `nan`
_NUMBER = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?(?:[eE][-+]?[0-9]{1,3})?")
# The dates any stored timestamp can be compared with: after UTC conversion, still a year 1–9999.
# Comparing aware datetimes never overflows, so the whole calendar is allowed and only what falls off its
# ends in UTC (`0001-01-01T00:00:00+01:00`) is refused.
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)


def _shown(text: str) -> str:
    return text if len(text) <= 40 else text[:40] + "…"


def whole_number(text: str, name: str, *, minimum: int = 0, maximum: int = SQLITE_MAX) -> int:
    """`text` as a whole number in [minimum, maximum], or a 422 naming `name` and the range."""
    value = whole_number_or_none(text, minimum=minimum, maximum=maximum)
    if value is None:
        raise invalid(f"`{name}` must be a whole number from {minimum} to {maximum}, not `{_shown(text)}`.")
    return value


def whole_number_or_none(text: str | None, *, minimum: int = 0, maximum: int = SQLITE_MAX) -> int | None:
    """For values a page makes itself (cursors, counters in a notice): anything else reads as absent."""
    value = (text or "").strip()
    if not _DIGITS.fullmatch(value) or not minimum <= int(value) <= maximum:
        return None
    return int(value)


def decimal(text: str, name: str, *, minimum: float = 0, maximum: float) -> float:
    """`text` as a plain decimal number (`2`, `0.5`) in [minimum, maximum], or a 422 naming the range."""
    value = text.strip()
    if not _DECIMAL.fullmatch(value) or not minimum <= float(value) <= maximum:
        raise invalid(f"`{name}` must be a number from {minimum:g} to {maximum:g}, not `{_shown(text)}`.")
    return float(value)


def number_or_none(text: str) -> float | None:
    """A number written as data (`3`, `-2.5`, `1e3`: a CSV cell, a payload value), finite and in ASCII."""
    value = text.strip()
    if not _NUMBER.fullmatch(value) or not math.isfinite(number := float(value)):
        return None
    return number


def instant(text: str, name: str) -> datetime:
    """An ISO 8601 date or timestamp (`Z`, an offset, or none = UTC) between years 1 and 9999 in UTC."""
    value = text.strip()
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is not None:
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        if EARLIEST <= parsed <= LATEST:
            return parsed.astimezone(UTC)
    raise invalid(f"`{name}` takes a date (2026-05-14) or an ISO 8601 timestamp between the years 1"
                  f" and 9999, not `{_shown(text)}`.")
