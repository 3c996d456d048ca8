"""Round trips and fuzzing with Hypothesis: encode-then-decode is identity, junk is a FormatError."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.errors import FormatError
from kjournal.model import ActionHeader
from kjournal.model import AppendHeader
from kjournal.model import BinaryPayload
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload
from kjournal.model.expire_after import MAX_NANOS
from kjournal.model.expire_after import NANOS_PER_UNIT
from kjournal.wire import ConsumedRecord
from kjournal.wire import append_action
from kjournal.wire import decode_action_header
from kjournal.wire import decode_action_record
from kjournal.wire import decode_binary_container
from kjournal.wire import decode_events
from kjournal.wire import encode_action
from kjournal.wire import encode_action_header
from kjournal.wire import encode_binary_container
from kjournal.wire import encode_events
from kjournal.wire import record_metadata_from_json
from kjournal.wire import record_metadata_to_json

SEQ_NR_MAX = 2**63 - 1

json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
present_json = json_values.filter(lambda value: value is not None)
payloads = st.one_of(
    st.none(),
    st.binary(max_size=40).map(BinaryPayload),
    st.text(max_size=40).map(TextPayload),
    json_values.map(JsonPayload),
)
tags = st.frozensets(st.text(max_size=10), max_size=4)


@st.composite
def expire_afters(draw: st.DrawFn) -> ExpireAfter:
    unit = draw(st.sampled_from(list(NANOS_PER_UNIT)))
    length = draw(st.integers(1, MAX_NANOS // NANOS_PER_UNIT[unit]))
    return (
        ExpireAfter.of(length, unit)
        if draw(st.booleans())
        else ExpireAfter(length * NANOS_PER_UNIT[unit])
    )


payload_metadata = st.builds(PayloadMetadata, st.none() | expire_afters(), st.none() | present_json)
header_metadata = st.builds(HeaderMetadata, st.none() | present_json)


@st.composite
def event_batches(draw: st.DrawFn) -> Events:
    seq_nrs = sorted(draw(st.sets(st.integers(1, SEQ_NR_MAX), min_size=1, max_size=6)))
    batch = tuple(Event(SeqNr(n), draw(tags), draw(payloads)) for n in seq_nrs)
    return Events(batch, draw(payload_metadata))


def _as_json_container_reads_it(events: Events) -> Events:
    # A JSON null payload is written as `"payload":null`, which reads back as no payload.
    return replace(
        events,
        events=tuple(
            replace(e, payload=None) if e.payload == JsonPayload(None) else e for e in events.events
        ),
    )


@given(event_batches())
def test_events_round_trip_through_the_chosen_container(events):
    payload_type, data = encode_events(events)
    has_binary = any(isinstance(e.payload, BinaryPayload) for e in events.events)
    assert payload_type is (PayloadType.BINARY if has_binary else PayloadType.JSON)
    expected = events if has_binary else _as_json_container_reads_it(events)
    decoded = decode_events(payload_type, data)
    assert decoded == expected
    assert decoded.metadata.expire_after == events.metadata.expire_after
    if events.metadata.expire_after is not None:
        assert decoded.metadata.expire_after is not None
        assert decoded.metadata.expire_after.length_and_unit() == (
            events.metadata.expire_after.length_and_unit()
        )
    assert encode_events(decoded) == encode_events(expected)


@given(event_batches())
def test_any_events_round_trip_through_the_binary_container(events):
    assert decode_binary_container(encode_binary_container(events)) == events


ranges = st.tuples(st.integers(1, SEQ_NR_MAX), st.integers(1, SEQ_NR_MAX)).map(
    lambda pair: SeqRange(SeqNr(min(pair)), SeqNr(max(pair)))
)
optional_text = st.none() | st.text(max_size=20)
action_headers: st.SearchStrategy[ActionHeader] = st.one_of(
    st.builds(
        AppendHeader,
        ranges,
        st.sampled_from([PayloadType.BINARY, PayloadType.JSON]),
        header_metadata,
        optional_text,
        optional_text,
    ),
    st.builds(DeleteHeader, st.integers(1, SEQ_NR_MAX).map(SeqNr), optional_text, optional_text),
    st.builds(PurgeHeader, optional_text, optional_text),
    st.builds(MarkHeader, st.text(max_size=36), optional_text, optional_text),
)


@given(action_headers)
def test_action_headers_round_trip(header):
    assert decode_action_header(encode_action_header(header)) == header


@given(st.builds(RecordMetadata, header_metadata, payload_metadata))
def test_record_metadata_round_trips(metadata):
    assert record_metadata_from_json(record_metadata_to_json(metadata)) == metadata


topics = st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True).filter(
    lambda t: t not in (".", "..")
)
keys = st.builds(Key, topics, st.text(min_size=1, max_size=20))
timestamps = st.integers(0, 2**41).map(
    lambda ms: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
)
actions = st.one_of(
    st.builds(
        append_action,
        keys,
        timestamps,
        event_batches(),
        st.none(),
        st.dictionaries(
            st.text(max_size=8).filter(lambda n: n != "journal.action"),
            st.text(max_size=8),
            max_size=3,
        ),
        optional_text,
        optional_text,
    ),
    st.builds(
        Delete, keys, timestamps, action_headers.filter(lambda h: isinstance(h, DeleteHeader))
    ),
    st.builds(Purge, keys, timestamps, st.builds(PurgeHeader, optional_text, optional_text)),
    st.builds(Mark, keys, timestamps, st.builds(MarkHeader, st.text(max_size=36), optional_text)),
)


@given(actions, st.integers(0, 1000), st.integers(0, 2**40))
def test_actions_round_trip_through_producer_and_consumer_records(action, partition, offset):
    parts = encode_action(action)
    consumed = ConsumedRecord(
        parts.topic, partition, offset, parts.key, parts.value, parts.headers, parts.timestamp_ms
    )
    decoded = decode_action_record(consumed)
    assert decoded is not None
    assert decoded.action == action
    assert (decoded.partition_offset.partition, decoded.offset) == (partition, offset)


@settings(max_examples=300)
@given(st.binary(max_size=200), st.sampled_from([PayloadType.BINARY, PayloadType.JSON]))
def test_junk_values_decode_or_raise_payload_format_error_only(data, payload_type):
    with contextlib.suppress(FormatError):
        decode_events(payload_type, data)


@settings(max_examples=300)
@given(event_batches(), st.data())
def test_corrupted_binary_containers_decode_or_raise_payload_format_error_only(events, data):
    encoded = bytearray(encode_binary_container(events))
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(encoded) - 1))
        encoded[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    with contextlib.suppress(FormatError):
        decode_binary_container(bytes(encoded[:cut]))


@settings(max_examples=300)
@given(st.binary(max_size=100) | json_values.map(lambda v: repr(v).encode()))
def test_junk_headers_decode_to_a_header_or_none_or_raise_header_format_error_only(data):
    with contextlib.suppress(FormatError):
        decode_action_header(data)
