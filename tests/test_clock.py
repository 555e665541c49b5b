"""Timestamp forms (reference 00-general.md §8) and the clock's modes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from emulator.core.clock import Clock, from_db, iso_z, pg_timestamp, to_db

instants = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1),
                        timezones=st.just(UTC))


@given(instants)
def test_postgres_form_trims_trailing_zeros(value: datetime) -> None:
    fraction = f"{value.microsecond:06d}".rstrip("0")
    expected = value.strftime("%Y-%m-%d %H:%M:%S") + (f".{fraction}" if fraction else "") + "+00"
    assert pg_timestamp(value) == expected


@given(instants)
def test_iso_z_has_milliseconds(value: datetime) -> None:
    assert iso_z(value) == value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond:06d}"[:3] + "Z"


@given(instants)
def test_stored_form_round_trips_and_sorts_like_time(value: datetime) -> None:
    assert from_db(to_db(value)) == value
    assert to_db(value) < to_db(value + timedelta(microseconds=1))


def test_offsets_are_converted_to_utc() -> None:
    paris = datetime(2026, 5, 14, 11, 0, tzinfo=UTC).astimezone()
    assert pg_timestamp(paris) == "2026-05-14 11:00:00+00"


def test_frozen_clock_moves_only_when_told() -> None:
    clock = Clock("frozen", datetime(2026, 1, 1, tzinfo=UTC))
    assert clock.now() == clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    clock.advance(90)
    assert clock.now() == datetime(2026, 1, 1, 0, 1, 30, tzinfo=UTC)
    clock.reset()
    assert clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
