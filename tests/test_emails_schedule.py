"""`scheduled_at` parsing: ISO 8601 and the documented natural-language forms, the 30-day limit."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from emulator.core.errors import ApiError
from emulator.resources.emails.schedule import parse_scheduled_at

NOW = datetime(2026, 5, 14, 9, 0, tzinfo=UTC)  # a Thursday


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-08-05T11:52:01.858Z", None),  # beyond 30 days: refused below
    ("2026-05-20T11:52:01.858Z", datetime(2026, 5, 20, 11, 52, 1, 858000, tzinfo=UTC)),
    ("2026-05-20T13:52:01+02:00", datetime(2026, 5, 20, 11, 52, 1, tzinfo=UTC)),
    ("2026-05-20 11:52", datetime(2026, 5, 20, 11, 52, tzinfo=UTC)),
    ("in 1 min", datetime(2026, 5, 14, 9, 1, tzinfo=UTC)),
    ("in 30 seconds", datetime(2026, 5, 14, 9, 0, 30, tzinfo=UTC)),
    ("in 1 hour", datetime(2026, 5, 14, 10, 0, tzinfo=UTC)),
    ("In 2 Days", datetime(2026, 5, 16, 9, 0, tzinfo=UTC)),
    ("in 2 weeks", datetime(2026, 5, 28, 9, 0, tzinfo=UTC)),
    ("tomorrow at 9am", datetime(2026, 5, 15, 9, 0, tzinfo=UTC)),
    ("tomorrow at 5:30pm", datetime(2026, 5, 15, 17, 30, tzinfo=UTC)),
    ("tomorrow", datetime(2026, 5, 15, 9, 0, tzinfo=UTC)),
    ("today at 18:00", datetime(2026, 5, 14, 18, 0, tzinfo=UTC)),
    ("Friday at 3pm ET", datetime(2026, 5, 15, 19, 0, tzinfo=UTC)),  # EDT = UTC-4
    ("friday at 3pm PT", datetime(2026, 5, 15, 22, 0, tzinfo=UTC)),
    ("Thursday at 8am", datetime(2026, 5, 21, 8, 0, tzinfo=UTC)),  # today's 8am has passed: next week
    ("thursday at 10am UTC", datetime(2026, 5, 14, 10, 0, tzinfo=UTC)),
    ("monday at 9am Europe/Paris", datetime(2026, 5, 18, 7, 0, tzinfo=UTC)),
    ("now", NOW),
])
def test_forms(text: str, expected: datetime | None) -> None:
    if expected is None:
        with pytest.raises(ApiError):
            parse_scheduled_at(text, NOW)
    else:
        assert parse_scheduled_at(text, NOW) == expected


def test_thirty_days_is_the_limit() -> None:
    assert parse_scheduled_at("in 30 days", NOW) == datetime(2026, 6, 13, 9, 0, tzinfo=UTC)
    with pytest.raises(ApiError) as refused:
        parse_scheduled_at("in 31 days", NOW)
    assert (refused.value.status, refused.value.kind.name) == (422, "validation_error")


def test_a_few_seconds_late_means_now() -> None:
    assert parse_scheduled_at("2026-05-14T08:59:30Z", NOW) == NOW
    with pytest.raises(ApiError):
        parse_scheduled_at("2026-05-14T08:58:00Z", NOW)


def test_empty_means_now() -> None:
    # Resend's Go SDK sends `"scheduled_at": ""` on every "send now" (issue 36).
    assert parse_scheduled_at("", NOW) == NOW


@pytest.mark.parametrize("text", [" ", "soon", "in five minutes", "in 3 fortnights", "tomorrow at 13pm",
                                  "friday at 3pm XYZ", "2026-13-01", 12])
def test_unusable(text: object) -> None:
    with pytest.raises(ApiError) as refused:
        parse_scheduled_at(text, NOW)
    assert refused.value.status == 422
