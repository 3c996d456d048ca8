"""Notification ids of an application topic and the feed positions they map to."""

from __future__ import annotations

import pytest
from eventsourcing.persistence import DataError
from hypothesis import given
from hypothesis import strategies as st
from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import Position
from kjournal_eventsourcing.notification_ids import IDS_PER_RECORD
from kjournal_eventsourcing.notification_ids import cursor_from
from kjournal_eventsourcing.notification_ids import notification_id
from kjournal_eventsourcing.notification_ids import position_of

offsets = st.integers(min_value=0, max_value=(1 << 63) // IDS_PER_RECORD - 1)
indexes = st.integers(min_value=0, max_value=IDS_PER_RECORD - 1)


def test_the_first_event_of_a_topic_is_notification_1() -> None:
    assert notification_id(0, 0) == 1
    assert notification_id(0, 1) == 2
    assert notification_id(1, 0) == IDS_PER_RECORD + 1


@given(offsets, indexes, offsets, indexes)
def test_ids_increase_with_the_log(offset1: int, index1: int, offset2: int, index2: int) -> None:
    earlier, later = sorted([(offset1, index1), (offset2, index2)])
    if earlier != later:
        assert notification_id(*earlier) < notification_id(*later)


@given(offsets, indexes)
def test_an_id_fits_a_signed_64_bit_integer(offset: int, index: int) -> None:
    assert 0 < notification_id(offset, index) < 1 << 63


@given(offsets, indexes)
def test_the_position_of_an_id_is_where_the_feed_delivers_that_event(
    offset: int, index: int
) -> None:
    assert position_of(notification_id(offset, index)) == Position(offset, index)


def test_an_id_between_two_records_starts_at_the_next_record_s_first_entries() -> None:
    # Ids past the last event of a record's million start inside it (entries it does not have
    # are none); the next record starts at skip 0.
    assert position_of(IDS_PER_RECORD) == Position(0, IDS_PER_RECORD - 1)
    assert position_of(IDS_PER_RECORD + 1) == Position(1, 0)


def test_from_the_start_needs_no_cursor() -> None:
    assert cursor_from(None) is None
    assert cursor_from(1) is None
    assert cursor_from(0) is None


def test_the_cursor_names_the_one_partition() -> None:
    text = cursor_from(notification_id(7, 2))
    assert text is not None
    assert Cursor.decode(text).positions == {0: Position(7, 2)}


def test_an_append_larger_than_a_record_s_million_has_no_ids() -> None:
    with pytest.raises(DataError, match="more than 1,000,000 events"):
        notification_id(3, IDS_PER_RECORD)
