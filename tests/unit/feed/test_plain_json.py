"""The catch-up's plain-JSON shortcut (kjournal/feed/plain_json.py) against the full path: where
it answers, its lines are the lines of the decoded append; where the full path refuses an
append, the shortcut does not answer; and it answers for every JSON container kjournal writes."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import orjson
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.errors import FormatError
from kjournal.errors import InvalidInput
from kjournal.feed.cursor import CursorFrame
from kjournal.feed.cursor import Position
from kjournal.feed.entries import AppendEvents
from kjournal.feed.entries import AppendLines
from kjournal.feed.plain_json import plain_json_lines
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Append
from kjournal.model import AppendHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadType
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload
from kjournal.read import event_records
from kjournal.wire import encode_events
from kjournal.wire import json_text
from kjournal_service.ndjson import ndjson_lines_sharing

KEY = Key("topic", "journal")
AT = datetime(2026, 12, 7, 9, 30, 15, 123_000, tzinfo=UTC)
PARTITION, OFFSET = 3, 41
FRAME = CursorFrame({p: Position(40 + p) for p in range(4)}, PARTITION)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
payloads = st.one_of(
    st.fixed_dictionaries({}),  # no payload
    st.fixed_dictionaries({"payload": json_values}),
    st.fixed_dictionaries({"payloadType": st.just("json"), "payload": json_values}),
    st.fixed_dictionaries({"payloadType": st.just("text"), "payload": st.none() | st.text()}),
)
tag_lists = st.lists(st.sampled_from(["a", "b", "ü", ""]), max_size=3)
# What the full path refuses or reads its own way: one of these is put in now and then.
oddities: list[tuple[str, Any]] = [
    ("seqNr", 0),
    ("seqNr", -1),
    ("seqNr", SEQ_NR_MAX + 1),
    ("seqNr", 2.0),
    ("seqNr", "3"),
    ("seqNr", True),
    ("seqNr", None),
    ("tags", None),
    ("tags", "a"),
    ("tags", [1]),
    ("tags", ["a", 2]),
    ("payloadType", "binary"),
    ("payloadType", 1),
    ("payloadType", ""),
    ("payloadType", "text"),  # with whatever payload the event has
]
metadata: st.SearchStrategy[Any] = st.sampled_from(
    [{}, {"expireAfter": "1 day"}, {"data": {"k": 1}}, {"expireAfter": "soon"}, [], "x", None]
)


@st.composite
def containers(draw: st.DrawFn) -> tuple[dict[str, Any], SeqRange]:
    """A container as writers write it (strictly increasing seqNrs), now and then with one
    oddity, a metadata member of any kind, or a header whose range is not the container's."""
    numbers = sorted(draw(st.sets(st.integers(1, 30), min_size=1, max_size=5)))
    events: list[dict[str, Any]] = [
        {"seqNr": n, "tags": draw(tag_lists), **draw(payloads)} for n in numbers
    ]
    if draw(st.integers(0, 2)) == 0:
        member, value = draw(st.sampled_from(oddities))
        draw(st.sampled_from(events))[member] = value
    if draw(st.integers(0, 5)) == 0:
        events.reverse()
    root: dict[str, Any] = {"events": events}
    if draw(st.booleans()):
        root["metadata"] = draw(metadata)
    first, last = numbers[0], numbers[-1]
    if draw(st.integers(0, 9)) == 0:
        last += 1  # a header that does not say the container's range
    return root, SeqRange(SeqNr(first), SeqNr(last))


def _append(payload: bytes, seq_range: SeqRange) -> Append:
    header = AppendHeader(
        seq_range, PayloadType.JSON, HeaderMetadata({"h": [1]}), origin="host", version="1.2"
    )
    return Append(KEY, AT, header, payload, {"user": "v"})


def _lines(entries: AppendEvents | AppendLines) -> list[Any]:
    return [orjson.loads(line) for line in ndjson_lines_sharing(*entries.lines_json()).splitlines()]


def _both(append: Append) -> tuple[AppendLines | None, AppendEvents | None]:
    plain = plain_json_lines(append, PartitionOffset(PARTITION, OFFSET))
    try:
        records = event_records(append, PARTITION, OFFSET)
    except (FormatError, InvalidInput):
        decoded = None
    else:
        indexes = tuple(range(len(records)))
        decoded = AppendEvents(KEY.id, records, indexes, FRAME, OFFSET)
    if plain is None:
        return None, decoded
    shared, own = plain
    lines = AppendLines(KEY.id, shared, own, tuple(range(len(own))), FRAME, OFFSET, lambda: records)
    return lines, decoded


@settings(max_examples=400)
@given(containers())
def test_where_the_shortcut_answers_its_lines_are_the_decoded_append_s(
    container: tuple[dict[str, Any], SeqRange],
):
    root, seq_range = container
    lines, decoded = _both(_append(json_text.dump_bytes(root), seq_range))
    if lines is not None:
        assert decoded is not None, "the shortcut took an append the full path refuses"
        assert _lines(lines) == _lines(decoded)


@given(st.lists(st.binary(max_size=30), max_size=1), st.booleans())
def test_bytes_that_are_no_container_are_left_to_the_full_path(data: list[bytes], text: bool):
    payload = data[0] if data else b'{"events": []}'
    lines, decoded = _both(_append(payload, SeqRange(SeqNr(1), SeqNr(1))))
    assert lines is None or decoded is not None


@st.composite
def written(draw: st.DrawFn) -> Events:
    numbers = sorted(draw(st.sets(st.integers(1, SEQ_NR_MAX), min_size=1, max_size=5)))
    payloads: st.SearchStrategy[JsonPayload | TextPayload | None] = st.one_of(
        st.none(),
        json_values.filter(lambda v: v is not None).map(JsonPayload),
        st.text(max_size=10).map(TextPayload),
    )
    events = tuple(
        Event(SeqNr(n), frozenset(draw(st.lists(st.text(max_size=4), max_size=3))), draw(payloads))
        for n in numbers
    )
    return Events(events)


@given(written())
def test_every_json_container_kjournal_writes_takes_the_shortcut(events: Events):
    payload_type, payload = encode_events(events)
    assert payload_type is PayloadType.JSON
    lines, decoded = _both(_append(payload, events.range))
    assert lines is not None
    assert decoded is not None
    assert _lines(lines) == _lines(decoded)


def test_entries_of_the_shortcut_are_the_decoded_append_s_feed_events():
    events = Events((Event(SeqNr(1), frozenset({"a"}), JsonPayload({"n": 1})),))
    _, payload = encode_events(events)
    lines, decoded = _both(_append(payload, events.range))
    assert lines is not None
    assert decoded is not None
    assert lines.entries() == decoded.entries()
