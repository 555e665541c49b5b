"""The one clock. Everything that needs "now" reads it, so tests can freeze or advance time.

Modes: `real` follows the wall clock; `frozen` stands still until set or advanced; an offset is kept
in real mode after `advance`/`set`, so real time keeps flowing from the new point.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A frozen clock with no explicit start begins here, so seeded runs are reproducible.
DEFAULT_FROZEN_START = datetime(2026, 1, 1, tzinfo=UTC)
# The instants the clock may show (issue 11: set to 9999-12-31, every send then failed computing
# "now + 30 days"). Stored times are ISO text that ends at year 9999, and schedules, expiries and
# retention windows are computed from now in either direction: a wide margin keeps them all in range.
EARLIEST = EPOCH
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
OUT_OF_RANGE = "The clock only goes from 1970-01-01T00:00:00Z to 9000-01-01T00:00:00Z."


def check(at: datetime) -> datetime:
    """`at` if the clock can show it; ValueError otherwise."""
    if not EARLIEST <= at <= LATEST:
        raise ValueError(OUT_OF_RANGE)
    return at


class Clock:
    def __init__(self, mode: str = "real", start: datetime | None = None) -> None:
        self._initial = (mode, start)
        self._listeners: list[Callable[[], None]] = []
        self._configure(mode, start)

    def _configure(self, mode: str, start: datetime | None) -> None:
        self.mode = mode
        self._offset = 0.0
        self._frozen_at = start or DEFAULT_FROZEN_START
        if mode == "real" and start is not None:
            self._offset = start.timestamp() - time.time()

    def now(self) -> datetime:
        if self.mode == "frozen":
            return self._frozen_at
        return datetime.fromtimestamp(time.time() + self._offset, UTC)

    def freeze(self, at: datetime | None = None) -> None:
        self._frozen_at = check(at) if at else self.now()
        self.mode = "frozen"
        self._changed()

    def unfreeze(self) -> None:
        if self.mode == "frozen":
            self._offset = self._frozen_at.timestamp() - time.time()
        self.mode = "real"
        self._changed()

    def set(self, at: datetime) -> None:
        check(at)
        if self.mode == "frozen":
            self._frozen_at = at
        else:
            self._offset = at.timestamp() - time.time()
        self._changed()

    def advance(self, seconds: float) -> None:
        self.set(self.after(seconds))

    def after(self, seconds: float) -> datetime:
        """The instant `seconds` from now; ValueError when the clock cannot show it."""
        now = self.now()
        if not 0 <= seconds <= (LATEST - now).total_seconds():  # also refuses inf and nan
            raise ValueError(OUT_OF_RANGE)
        return now + timedelta(seconds=seconds)

    def reset(self) -> None:
        self._configure(*self._initial)
        self._changed()

    def export(self) -> dict[str, object]:
        """The whole clock state (mode, frozen instant, offset from real time), for snapshots."""
        return {"mode": self.mode, "frozen_at": iso_z(self._frozen_at, digits=6), "offset": self._offset}

    def load(self, state: dict[str, object]) -> None:
        """Return to a state from `export()`; a real clock keeps its offset, not the instant."""
        self.mode = str(state["mode"])
        self._frozen_at = parse_iso(str(state["frozen_at"]))
        self._offset = float(state["offset"])  # type: ignore[arg-type]
        self._changed()

    def not_before(self, at: datetime) -> None:
        """Move forward to `at` if the clock shows an earlier instant (keeping its mode)."""
        now = self.now()
        if now < at:
            if self.mode == "frozen":
                self._frozen_at = at
            else:
                self._offset += (at - now).total_seconds()
            self._changed()

    def on_change(self, listener: Callable[[], None]) -> None:
        """Called after every set/advance/freeze, e.g. to wake the job runner."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def state(self) -> dict[str, object]:
        return {"mode": self.mode, "now": iso_z(self.now(), digits=6)}


def pg_timestamp(value: datetime) -> str:
    """Postgres text form used by sent emails, domains, keys, templates: `2023-04-03 22:13:42.674981+00`."""
    text = _naive_utc(value).isoformat(sep=" ", timespec="microseconds")  # faster than strftime
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}+00" if fraction else f"{whole}+00"


def iso_z(value: datetime, digits: int = 3) -> str:
    """ISO 8601 UTC with `Z`: `2023-10-06T23:47:56.678Z` (receiving, metrics, webhook payloads)."""
    whole, _, fraction = _naive_utc(value).isoformat(timespec="microseconds").partition(".")
    return f"{whole}.{fraction[:digits]}Z" if digits else f"{whole}Z"


def _naive_utc(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None)


@lru_cache(maxsize=256)
def to_db(value: datetime) -> str:
    """Stored form: fixed-width ISO, so text order is time order (`2026-05-14T09:00:00.000000Z`)."""
    # Cached: the emails of a broadcast chunk share their send time and their delivery's due time.
    # isoformat is several times faster than strftime, and this runs a few times per request.
    return _naive_utc(value).isoformat(timespec="microseconds") + "Z"


def from_db(text: str) -> datetime:
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)


def parse_iso(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (with `Z` or an offset; naive means UTC). Raises ValueError."""
    parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
