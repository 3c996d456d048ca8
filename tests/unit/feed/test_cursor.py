"""Feed cursors: what `encode` writes `decode` reads back; anything else is InvalidCursor (a 400),
never another error."""

from __future__ import annotations

import base64
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kjournal.errors import InvalidCursor
from kjournal.feed import Cursor
from kjournal.feed import Position
from kjournal.feed.cursor import CursorFrame

positions = st.dictionaries(
    st.integers(0, 10_000),
    st.builds(Position, st.integers(0, 2**63 - 1), st.integers(0, 10**9)),
    min_size=1,
    max_size=50,
)


@given(positions)
def test_round_trip(by_partition: dict[int, Position]):
    cursor = Cursor(by_partition)
    assert Cursor.decode(cursor.encode()) == cursor


@given(
    positions,
    st.integers(0, 10_000),
    st.builds(Position, st.integers(0, 2**63 - 1), st.integers(0, 10**9)),
)
def test_a_frame_makes_the_cursor_a_copy_with_one_position_changed_is(
    by_partition: dict[int, Position], partition: int, position: Position
):
    # the feed's per-record shortcut: the other partitions' text joined once
    made = CursorFrame(by_partition, partition).cursor(position)
    expected = Cursor({**by_partition, partition: position})
    assert made == expected
    assert made.encode() == Cursor(dict(expected.positions)).encode()


@given(
    positions,
    st.integers(0, 10_000),
    st.integers(0, 2**63 - 2),
    st.integers(1, 1_000).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))),
)
def test_the_cursor_after_an_event_is_the_frames_cursor_after_that_entry(
    by_partition: dict[int, Position], partition: int, offset: int, entry: tuple[int, int]
):
    index, events = entry
    frame = CursorFrame(by_partition, partition)
    made = frame.after_event(offset, index, events)
    expected = frame.cursor(Position(offset, index).after_entry(events))
    assert made == expected
    assert made.encode() == expected.encode()


@given(st.text(max_size=200))
def test_any_text_is_a_cursor_or_invalid(text: str):
    with contextlib.suppress(InvalidCursor):
        Cursor.decode(text)


def _v1(body: str) -> str:
    return "v1." + base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "v2.MDow",
        "v1.",
        "v1.!!!",
        _v1("0:1,0:2"),  # a partition twice
        _v1("-1:0"),
        _v1("0:01"),  # not canonical
        _v1("0:5:0"),  # skip 0 is written without it
        _v1("0:9223372036854775808"),
        _v1("0:1;1:2"),
        "v1." + "A" * 70_000,
    ],
)
def test_invalid_cursors(text: str):
    with pytest.raises(InvalidCursor):
        Cursor.decode(text)


def test_a_position_inside_an_append_moves_to_the_next_record_after_its_last_entry():
    assert Position(7).after_entry(3) == Position(7, 1)
    assert Position(7, 1).after_entry(3) == Position(7, 2)
    assert Position(7, 2).after_entry(3) == Position(8)
    assert Position(7).after_entry(1) == Position(8)


def test_the_text_is_url_and_event_stream_safe():
    text = Cursor({0: Position(12, 2), 3: Position(5)}).encode()
    assert text.replace(".", "").replace("-", "").replace("_", "").isalnum()
