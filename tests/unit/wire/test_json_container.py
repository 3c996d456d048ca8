"""JSON container: what is accepted, what is a PayloadFormatError."""

from __future__ import annotations

import json

import pytest
from kjournal.errors import InvalidPayload
from kjournal.errors import PayloadFormatError
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import SeqNr
from kjournal.wire import decode_events
from kjournal.wire import decode_json_container
from kjournal.wire import encode_events
from kjournal.wire import encode_json_container

from tests.unit.wire import catalog


def _container(*events: object, **extra: object) -> bytes:
    return json.dumps({"events": list(events), **extra}).encode()


def test_events_without_a_binary_payload_use_the_json_container():
    events = catalog.PAYLOADS["Payload-text-many.json"][1]
    assert encode_events(events)[0] is PayloadType.JSON


def test_any_binary_event_switches_the_whole_record_to_the_binary_container():
    events = catalog.PAYLOADS["Payload-empty-binary-text-json.bin"][1]
    assert encode_events(events)[0] is PayloadType.BINARY


def test_the_json_container_refuses_binary_payloads():
    with pytest.raises(InvalidPayload, match="binary"):
        encode_json_container(Events((Event(SeqNr(1), payload=BinaryPayload(b"x")),)))


def test_a_json_null_payload_reads_back_as_no_payload():
    # Play reads `"payload": null` as an absent Option, so the Scala reader loses it too.
    events = Events((Event(SeqNr(1), payload=JsonPayload(None)),))
    data = encode_json_container(events)
    assert b'"payloadType":"json","payload":null' in data
    assert decode_json_container(data) == Events((Event(SeqNr(1)),))


def test_payload_type_without_payload_is_no_payload():
    data = _container({"seqNr": 1, "tags": [], "payloadType": "text"})
    assert decode_json_container(data).events[0].payload is None


def test_unknown_fields_are_ignored():
    data = _container({"seqNr": 1, "tags": ["a"], "future": True}, future=1)
    assert decode_json_container(data) == Events((Event(SeqNr(1), frozenset({"a"})),))


def test_tags_are_written_sorted_and_read_as_a_set():
    events = Events((Event(SeqNr(1), frozenset({"b", "a", "é", "Z"})),))
    data = encode_json_container(events)
    assert b'"tags":["Z","a","b","\xc3\xa9"]' in data
    assert decode_json_container(_container({"seqNr": 1, "tags": ["b", "a", "a"]})).events[
        0
    ].tags == frozenset({"a", "b"})


def test_expire_after_keeps_the_unit_it_was_written_in():
    metadata = PayloadMetadata(ExpireAfter.of(60, "minutes"))
    data = _container({"seqNr": 1, "tags": []}, metadata={"expireAfter": "60 minutes"})
    decoded = decode_json_container(data)
    assert decoded.metadata == metadata
    assert b'"expireAfter":"60 minutes"' in encode_json_container(decoded)


def test_expire_after_in_milliseconds_is_written_back_in_milliseconds_as_scala_does():
    data = _container({"seqNr": 1, "tags": []}, metadata={"expireAfter": 90_000})
    decoded = decode_json_container(data)
    assert decoded.metadata.expire_after == ExpireAfter.of(90, "second")
    assert b'"expireAfter":"90000 milliseconds"' in encode_json_container(decoded)


def test_float_seq_nr_that_is_whole_is_accepted_like_play():
    assert decode_json_container(_container({"seqNr": 2.0, "tags": []})).events[0].seq_nr == 2


BAD = [
    (b"", "not UTF-8 JSON"),
    (b"\xff{}", "not UTF-8 JSON"),
    ('{"events":[]}'.encode("utf-16"), "not UTF-8 JSON"),
    (b'\xef\xbb\xbf{"events":[{"seqNr":1,"tags":[]}]}', "not UTF-8 JSON"),
    (b"{", "not UTF-8 JSON"),
    (b'{"events":[{"seqNr":1,"tags":[]}]} x', "not UTF-8 JSON"),
    (b'{"events":[{"seqNr":NaN,"tags":[]}]}', "NaN"),
    (b'{"events":[{"seqNr":Infinity,"tags":[]}]}', "Infinity"),
    (b"[]", "must be a JSON object"),
    (b"{}", "non-empty array"),
    (b'{"events":[]}', "non-empty array"),
    (b'{"events":{}}', "non-empty array"),
    (_container(1), "must be a JSON object"),
    (_container({"tags": []}), "seqNr must be a 64-bit integer"),
    (_container({"seqNr": "1", "tags": []}), "seqNr must be a 64-bit integer"),
    (_container({"seqNr": 1.5, "tags": []}), "seqNr must be a 64-bit integer"),
    (_container({"seqNr": True, "tags": []}), "seqNr must be a 64-bit integer"),
    (_container({"seqNr": 2**63, "tags": []}), "seqNr must be a 64-bit integer"),
    (_container({"seqNr": 0, "tags": []}), "seqNr"),
    (_container({"seqNr": 1}), "tags must be an array of strings"),
    (_container({"seqNr": 1, "tags": "a"}), "tags must be an array of strings"),
    (_container({"seqNr": 1, "tags": [1]}), "tags must be an array of strings"),
    (_container({"seqNr": 1, "tags": [], "payloadType": "binary", "payload": "x"}), "json or text"),
    (_container({"seqNr": 1, "tags": [], "payloadType": 2, "payload": "x"}), "json or text"),
    (_container({"seqNr": 1, "tags": [], "payloadType": "text", "payload": 1}), "JSON string"),
    (_container({"seqNr": 2, "tags": []}, {"seqNr": 1, "tags": []}), "strictly increase"),
    (_container({"seqNr": 1, "tags": []}, metadata=[]), "must be a JSON object"),
    (
        _container({"seqNr": 1, "tags": []}, metadata={"expireAfter": "soon"}),
        "not a finite duration",
    ),
    (_container({"seqNr": 1, "tags": []}, metadata={"expireAfter": "0 days"}), "positive"),
    (_container({"seqNr": 1, "tags": []}, metadata={"expireAfter": True}), "milliseconds"),
    (_container({"seqNr": 1, "tags": []}, metadata={"expireAfter": 1.5}), "milliseconds"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_malformed_json_containers_raise_payload_format_error(data, message):
    with pytest.raises(PayloadFormatError, match=message):
        decode_json_container(data)


def test_record_payload_type_text_is_not_a_container():
    with pytest.raises(PayloadFormatError, match="binary or json"):
        decode_events(PayloadType.TEXT, b"{}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1, 2}, object(), "\ud800"])
def test_json_payloads_that_are_not_json_cannot_be_encoded(value):
    with pytest.raises(InvalidPayload):
        encode_events(Events((Event(SeqNr(1), payload=JsonPayload(value)),)))
