"""The readers of typed numbers and dates (emulator/core/typed.py, issue 36)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.core.errors import ApiError
from emulator.core.typed import (
    SQLITE_MAX,
    decimal,
    instant,
    number_or_none,
    whole_number,
    whole_number_or_none,
)


@pytest.mark.parametrize("text", ["²", "٣", "-1", "1.5", "", "99999999999999999999999", str(SQLITE_MAX + 1),
                                  "1" * 400])
def test_whole_number_refuses_what_is_not_an_ascii_number_in_range(text: str) -> None:
    with pytest.raises(ApiError) as caught:
        whole_number(text, "deleted")
    assert (caught.value.kind.status, caught.value.kind.name) == (422, "validation_error")
    assert "`deleted` must be a whole number from 0 to" in caught.value.message


def test_whole_number_reads_the_range_ends() -> None:
    assert whole_number(" 0 ", "n") == 0
    assert whole_number(str(SQLITE_MAX), "n") == SQLITE_MAX
    assert whole_number("7", "n", minimum=7, maximum=7) == 7


def test_whole_number_or_none_reads_garbage_as_absent() -> None:
    assert [whole_number_or_none(t) for t in (None, "²", "1" * 23, "12")] == [None, None, None, 12]


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00", "tomorrow",
                                  "2026-13-01"])
def test_instant_refuses_dates_without_a_utc_form(text: str) -> None:
    with pytest.raises(ApiError) as caught:
        instant(text, "before")
    assert caught.value.kind.status == 422


def test_instant_reads_dates_and_offsets_as_utc() -> None:
    assert instant("2026-05-14", "before") == datetime(2026, 5, 14, tzinfo=UTC)
    assert instant("2026-05-14T10:00:00+01:00", "before") == datetime(2026, 5, 14, 9, tzinfo=UTC)


@pytest.mark.parametrize("text", ["٣", "1_0", "1e1", "inf", "nan", "-1", ".5", "0x1", "", "300.5",
                                  "1" * 16])
def test_decimal_refuses_what_float_reads_but_a_person_would_not_type(text: str) -> None:
    with pytest.raises(ApiError) as caught:
        decimal(text, "timeout", maximum=300)
    assert "`timeout` must be a number from 0 to 300" in caught.value.message


def test_decimal_reads_plain_numbers_in_range() -> None:
    assert [decimal(t, "timeout", maximum=300) for t in ("0", " 2.5 ", "300")] == [0.0, 2.5, 300.0]


def test_number_or_none_reads_ascii_finite_numbers_only() -> None:
    texts = ["3", " -2.5 ", "1e3", "٣", "1_0", "inf", "nan", "1e999", "0x1", "", "1" * 16]
    assert [number_or_none(t) for t in texts] == [3.0, -2.5, 1000.0] + [None] * 8


@given(st.text(max_size=60))
def test_readers_answer_any_text_with_a_value_or_a_422(text: str) -> None:
    for read in (lambda: whole_number(text, "n"), lambda: instant(text, "d"),
                 lambda: decimal(text, "s", maximum=1e9)):
        try:
            read()
        except ApiError as error:
            assert error.kind.status == 422
