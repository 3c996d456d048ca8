"""Records <-> actions: what is skipped, what is an error, what a producer gets."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone

import pytest
from kjournal.errors import FormatError
from kjournal.errors import HeaderFormatError
from kjournal.errors import InvalidInput
from kjournal.errors import InvalidKey
from kjournal.model import ACTION_HEADER
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.wire import ConsumedRecord
from kjournal.wire import append_action
from kjournal.wire import decode_action_record
from kjournal.wire import decode_events
from kjournal.wire import encode_action
from kjournal.wire import timestamp_from_ms
from kjournal.wire import timestamp_to_ms

KEY = Key(topic="journal", id="player-1")
NOW = datetime(2024, 5, 6, 7, 8, 9, 123_000, tzinfo=UTC)
EVENTS = Events((Event(SeqNr(3), frozenset({"t"}), TextPayload("x")), Event(SeqNr(5))))
APPEND_HEADER = b'{"append":{"range":{"from":1,"to":1},"payloadType":"json","metadata":{}}}'


def _record(**changes: object) -> ConsumedRecord:
    fields: dict[str, object] = {
        "topic": "journal",
        "partition": 1,
        "offset": 7,
        "key": b"player-1",
        "value": b'{"events":[{"seqNr":1,"tags":[]}]}',
        "headers": [(ACTION_HEADER, APPEND_HEADER), ("h", b"v")],
        "timestamp_ms": 1_714_979_289_123,
    }
    fields.update(changes)
    return ConsumedRecord(**fields)  # type: ignore[arg-type]


def test_an_append_record_decodes_without_decoding_its_value():
    record = _record(value=b"not even json")
    decoded = decode_action_record(record)
    assert decoded is not None
    assert isinstance(decoded.action, Append)
    assert decoded.action.payload == b"not even json"
    assert decoded.action.headers == {"h": "v"}
    assert decoded.action.timestamp == NOW
    assert (decoded.partition_offset.partition, decoded.offset) == (1, 7)


@pytest.mark.parametrize(
    "changes",
    [
        {"key": None},
        {"key": b""},
        {"timestamp_ms": None},
        {"timestamp_ms": -1},
        {"headers": [("h", b"v")]},
        {"headers": []},
        {"headers": [(ACTION_HEADER, b'{"rename":{"to":"x"}}')]},
        {"headers": [(ACTION_HEADER, b"[]")]},
        {"value": None},
    ],
    ids=lambda changes: repr(changes),
)
def test_records_that_old_readers_skip(changes):
    assert decode_action_record(_record(**changes)) is None


def test_a_present_but_invalid_action_header_is_an_error_even_with_a_null_value():
    with pytest.raises(HeaderFormatError):
        decode_action_record(_record(headers=[(ACTION_HEADER, b"{oops")], value=None))


def test_only_the_first_action_header_counts():
    headers = [(ACTION_HEADER, b'{"purge":{}}'), (ACTION_HEADER, b"{oops"), ("h", b"v")]
    decoded = decode_action_record(_record(headers=headers))
    assert decoded is not None
    assert isinstance(decoded.action, Purge)


def test_a_user_header_that_is_not_utf8_is_an_error_for_appends_only():
    headers = [(ACTION_HEADER, APPEND_HEADER), ("h", b"\xff")]
    with pytest.raises(HeaderFormatError, match="'h'"):
        decode_action_record(_record(headers=headers))
    mark = [(ACTION_HEADER, b'{"mark":{"id":"m"}}'), ("h", b"\xff")]
    assert decode_action_record(_record(headers=mark)) is not None


def test_user_headers_keep_the_last_of_duplicates_and_skip_every_action_header():
    headers = [(ACTION_HEADER, APPEND_HEADER), ("h", b"1"), (ACTION_HEADER, b"x"), ("h", b"2")]
    decoded = decode_action_record(_record(headers=headers))
    assert decoded is not None
    assert isinstance(decoded.action, Append)
    assert decoded.action.headers == {"h": "2"}


def test_a_key_that_is_not_utf8_is_decoded_with_replacement_like_the_java_deserializer():
    decoded = decode_action_record(_record(key=b"id-\xff"))
    assert decoded is not None
    assert decoded.action.key.id == "id-\ufffd"


def test_a_timestamp_beyond_datetime_is_a_format_error():
    with pytest.raises(FormatError):
        decode_action_record(_record(timestamp_ms=2**62))


@pytest.mark.parametrize(
    "action",
    [
        Delete(KEY, NOW, DeleteHeader(SeqNr(4), "o", "v")),
        Purge(KEY, NOW, PurgeHeader()),
        Mark(KEY, NOW, MarkHeader("m-1", version="v")),
    ],
)
def test_delete_purge_and_mark_have_a_null_value_and_only_the_action_header(action):
    parts = encode_action(action)
    assert parts.value is None
    assert [name for name, _ in parts.headers] == [ACTION_HEADER]
    assert parts.topic == "journal"
    assert parts.key == b"player-1"
    assert parts.timestamp_ms == 1_714_979_289_123
    back = decode_action_record(
        ConsumedRecord("journal", 0, 0, parts.key, parts.value, parts.headers, parts.timestamp_ms)
    )
    assert back is not None
    assert back.action == action


def test_append_action_fills_in_the_header_and_encodes_the_events():
    metadata = RecordMetadata(HeaderMetadata({"h": 1}), PayloadMetadata(ExpireAfter.of(2, "days")))
    append = append_action(KEY, NOW, EVENTS, metadata, {"trace": "t-1"}, "host", "0.1.0")

    header = append.header
    assert (header.range.from_, header.range.to) == (3, 5)
    assert header.payload_type is PayloadType.JSON
    assert header.metadata == HeaderMetadata({"h": 1})
    assert (header.origin, header.version) == ("host", "0.1.0")
    assert decode_events(header.payload_type, append.payload).metadata == metadata.payload

    parts = encode_action(append)
    assert parts.headers[0][0] == ACTION_HEADER
    assert parts.headers[1:] == [("trace", b"t-1")]
    assert parts.value == append.payload


def test_append_action_takes_payload_metadata_from_events_or_metadata_but_not_two_different():
    in_events = Events(EVENTS.events, PayloadMetadata(data=1))
    assert decode_events(PayloadType.JSON, append_action(KEY, NOW, in_events).payload) == in_events
    same = append_action(KEY, NOW, in_events, RecordMetadata(payload=PayloadMetadata(data=1)))
    assert decode_events(PayloadType.JSON, same.payload) == in_events
    only_header = append_action(KEY, NOW, in_events, RecordMetadata(HeaderMetadata("h")))
    assert decode_events(PayloadType.JSON, only_header.payload) == in_events
    assert only_header.header.metadata == HeaderMetadata("h")
    with pytest.raises(InvalidInput, match="twice"):
        append_action(KEY, NOW, in_events, RecordMetadata(payload=PayloadMetadata(data=2)))


def test_an_action_header_cannot_be_smuggled_in_as_a_user_header():
    append = append_action(KEY, NOW, EVENTS, headers={ACTION_HEADER: "{}"})
    with pytest.raises(InvalidInput, match="reserved"):
        encode_action(append)


def test_keys_and_headers_that_are_not_unicode_cannot_be_encoded():
    with pytest.raises(InvalidKey):
        encode_action(Purge(Key("journal", "a\ud800"), NOW, PurgeHeader()))
    with pytest.raises(InvalidInput):
        encode_action(append_action(KEY, NOW, EVENTS, headers={"h": "\udfff"}))


def test_timestamps_are_milliseconds_since_the_epoch_in_utc():
    assert timestamp_to_ms(datetime(1970, 1, 1, tzinfo=UTC)) == 0
    assert timestamp_to_ms(NOW + timedelta(microseconds=999)) == 1_714_979_289_123
    plus_two = NOW.astimezone(timezone(timedelta(hours=2)))
    assert timestamp_to_ms(plus_two) == 1_714_979_289_123
    assert timestamp_from_ms(1_714_979_289_123) == NOW
    assert timestamp_from_ms(0).tzinfo is UTC
    with pytest.raises(InvalidInput, match="timezone-aware"):
        timestamp_to_ms(datetime(2024, 1, 1))
    with pytest.raises(InvalidInput, match="1970"):
        timestamp_to_ms(datetime(1969, 12, 31, tzinfo=UTC))
