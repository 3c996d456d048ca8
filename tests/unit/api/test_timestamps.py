"""Timestamps on the wire: ISO 8601 in UTC, milliseconds, `Z`; memoized per instant."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone

from hypothesis import given
from hypothesis import strategies as st
from kjournal.api.schemas import format_timestamp


def test_utc_with_milliseconds_and_z() -> None:
    assert (
        format_timestamp(datetime(2026, 11, 29, 3, 4, 5, 678_901, UTC))
        == "2026-11-29T03:04:05.678Z"
    )


def test_an_instant_given_in_another_zone_is_written_in_utc() -> None:
    plus_one = timezone(timedelta(hours=1))
    assert (
        format_timestamp(datetime(2026, 11, 29, 4, 4, 5, 0, plus_one)) == "2026-11-29T03:04:05.000Z"
    )


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
    )
)
def test_the_memo_answers_as_the_formatting_does(value: datetime) -> None:
    # Equal aware datetimes are the same instant, whatever their zones: one memo entry serves all.
    expected = value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert format_timestamp(value) == expected
    assert format_timestamp(value.astimezone(UTC)) == expected
