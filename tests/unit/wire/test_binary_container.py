"""Binary container: version byte handling, truncation and malformed input."""

from __future__ import annotations

import struct

import pytest
from kjournal.errors import InvalidPayload
from kjournal.errors import PayloadFormatError
from kjournal.model import Events
from kjournal.model import PayloadType
from kjournal.model import TextPayload
from kjournal.wire import decode_binary_container
from kjournal.wire import decode_events
from kjournal.wire import encode_binary_container

from tests.unit.wire import catalog

MIXED = catalog.BINARY_CONTAINERS["empty-binary-text-json"]
V1 = catalog.read("v1-events-empty-binary-text-json.bin")
METADATA_JSON = b'{"expireAfter":"1 day","data":{"key":"value"}}'
EVENTS_END = len(V1) - len(METADATA_JSON)


def test_writer_emits_version_1():
    assert encode_binary_container(MIXED)[0] == 1


def test_version_0_reads_without_metadata_and_ignores_trailing_bytes():
    data = catalog.read("v0-events-empty-binary-text-json.bin") + b"trailing"
    assert decode_binary_container(data) == Events(MIXED.events)


@pytest.mark.parametrize("version", [2, 7, 0x7F, 0xFF])
def test_an_unknown_version_byte_is_skipped_and_read_as_version_0(version):
    # Scala: codecs.choice(version1, version0, ignore(1 byte) ~> events)
    data = bytes([version]) + V1[1:]
    assert decode_binary_container(data) == Events(MIXED.events)


@pytest.mark.parametrize(
    "metadata",
    [
        b"",
        b"not json",
        b'{"expireAfter":"1 fortnight"}',
        b'{"expireAfter":"0 days"}',
        b"[]",
        b"{}x",
    ],
)
def test_version_1_with_unreadable_metadata_falls_back_to_empty_metadata(metadata):
    assert decode_binary_container(V1[:EVENTS_END] + metadata) == Events(MIXED.events)


def test_every_truncation_inside_the_events_is_a_payload_format_error():
    for length in range(EVENTS_END):
        with pytest.raises(PayloadFormatError):
            decode_binary_container(V1[:length])


def test_truncation_inside_the_metadata_only_loses_the_metadata():
    for length in range(EVENTS_END, len(V1)):
        assert decode_binary_container(V1[:length]).events == MIXED.events


def _one_event(body: bytes, *, size: int | None = None, count: int = 1) -> bytes:
    return struct.pack(">Bii", 1, count, len(body) if size is None else size) + body + b"{}"


def _event_body(
    seq_nr: int = 1,
    tags: bytes = b"",
    kind: int = 0,
    payload: bytes = b"",
    payload_size: int | None = None,
) -> bytes:
    size = len(payload) if payload_size is None else payload_size
    return struct.pack(">qi", seq_nr, len(tags)) + tags + struct.pack(">Bi", kind, size) + payload


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"\x01", "event count"),
        (struct.pack(">Bi", 1, 0) + b"{}", "positive"),
        (struct.pack(">Bi", 1, -3) + b"{}", "positive"),
        (_one_event(_event_body(), size=-1), "claims -1 bytes"),
        (_one_event(_event_body(), size=1000), "claims 1000 bytes"),
        (_one_event(_event_body(), count=2), "event 1 of 2 is missing"),
        (_one_event(_event_body(kind=4)), "unknown payload kind 4"),
        (_one_event(_event_body(kind=0xFF)), "unknown payload kind 255"),
        (_one_event(_event_body(kind=1, payload=b"x", payload_size=9)), "payload claims 9"),
        (_one_event(_event_body(kind=1, payload_size=-1)), "payload claims -1"),
        (_one_event(_event_body(tags=struct.pack(">i", 5) + b"ab")), "tag claims 5"),
        (_one_event(_event_body(tags=b"\x00\x00")), "truncated tag length"),
        (_one_event(_event_body(tags=struct.pack(">i", 2) + b"\xff\xfe")), "utf-8"),
        (_one_event(_event_body(kind=3, payload=b"\xc3")), "utf-8"),
        (_one_event(_event_body(kind=2, payload=b"{nope")), "Expecting"),
        (_one_event(_event_body(kind=2, payload=b"NaN")), "NaN"),
        (_one_event(_event_body(seq_nr=0)), "seqNr"),
        (_one_event(_event_body(seq_nr=-5)), "seqNr"),
        (_one_event(b"\x00" * 11), "too short for a seqNr"),
        (_one_event(_event_body()[:-1]), "too short for its payload"),
    ],
)
def test_malformed_containers_raise_payload_format_error(data, message):
    with pytest.raises(PayloadFormatError, match=f"(?i){message}"):
        decode_binary_container(data)


def test_bytes_left_inside_an_event_are_ignored():
    body = _event_body(kind=3, payload=b"hi") + b"extra"
    assert decode_binary_container(_one_event(body)).events[0].payload == TextPayload("hi")


def test_a_none_payload_may_carry_bytes_that_are_skipped():
    body = _event_body(kind=0, payload=b"ignored")
    assert decode_binary_container(_one_event(body)).events[0].payload is None


def test_events_out_of_order_are_a_payload_format_error():
    two = struct.pack(">i", 2) + b"".join(
        struct.pack(">i", len(b)) + b for b in (_event_body(seq_nr=2), _event_body(seq_nr=1))
    )
    with pytest.raises(PayloadFormatError, match="strictly increase"):
        decode_binary_container(b"\x01" + two + b"{}")


def test_text_that_is_not_unicode_cannot_be_encoded():
    with pytest.raises(InvalidPayload):
        encode_binary_container(Events((catalog.event(1, TextPayload("\ud800")),)))


def test_decode_events_accepts_memoryview_and_bytearray():
    assert decode_events(PayloadType.BINARY, bytearray(V1)) == MIXED  # type: ignore[arg-type]
    assert decode_events(PayloadType.BINARY, memoryview(V1)) == MIXED  # type: ignore[arg-type]
