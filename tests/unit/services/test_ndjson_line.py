"""ndjson_line: orjson's speed, the standard library's answers where orjson refuses a value;
lines that share members encode them once."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kjournal.feed import AppendEvents
from kjournal.feed import Position
from kjournal.feed import entry_to_json
from kjournal.feed.cursor import CursorFrame
from kjournal.model import Append
from kjournal.model import ExpireAfter
from kjournal.read import event_records
from kjournal.testing.records import append_record
from kjournal.wire.record import decode_action_record
from kjournal_service.ndjson import ndjson_line
from kjournal_service.ndjson import ndjson_lines_sharing

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_a_line_is_one_compact_json_document_of_the_value(value: object) -> None:
    line = ndjson_line(value)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert json.loads(line) == value


def test_non_ascii_is_raw_utf8_and_control_characters_are_escaped() -> None:
    assert ndjson_line({"a": "é😀\n\x1f"}) == '{"a":"é😀\\n\\u001f"}\n'.encode()


def test_integers_beyond_64_bits_take_the_standard_path() -> None:
    assert (
        ndjson_line({"n": 2**70, "m": -(2**64)})
        == b'{"n":1180591620717411303424,"m":-18446744073709551616}\n'
    )


def test_what_is_not_json_still_raises() -> None:
    with pytest.raises(TypeError):
        ndjson_line({"s": {1, 2}})
    with pytest.raises(UnicodeEncodeError):
        ndjson_line({"s": "\ud800"})


members = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


@given(members, st.lists(members, max_size=5))
def test_lines_sharing_members_are_the_lines_of_each_item_with_them(
    shared: dict[str, object], own: list[dict[str, object]]
) -> None:
    own = [{k: v for k, v in item.items() if k not in shared} for item in own]
    lines = ndjson_lines_sharing(shared, own)
    assert lines.count(b"\n") == len(own)
    assert [json.loads(line) for line in lines.splitlines()] == [{**item, **shared} for item in own]


def test_an_appends_lines_are_its_entries_lines_with_the_record_members_written_once() -> None:
    append = decode_action_record(append_record(7, range(3, 7), expire_after=ExpireAfter(60)))
    assert append is not None
    assert isinstance(append.action, Append)
    events = event_records(append.action, 0, 7)
    frame = CursorFrame({0: Position(7), 1: Position(5)}, 0)
    delivered = AppendEvents("journal", events, (1, 2, 3), frame, 7)  # past a skip of 1
    entries = delivered.entries()
    assert [entry.index for entry in entries] == [1, 2, 3]
    assert entries[-1].cursor.positions == {0: Position(8), 1: Position(5)}
    assert entries[0].cursor == frame.cursor(Position(7, 2))
    lines = ndjson_lines_sharing(*delivered.lines_json())
    assert [json.loads(line) for line in lines.splitlines()] == [
        json.loads(ndjson_line(entry_to_json(entry))) for entry in entries
    ]
    assert lines.count(b'"version"') == len(entries)  # each line whole: shared, not left out
