"""Golden files: decode each, re-encode, compare bytes (tests/fixtures/wire/README.md)."""

from __future__ import annotations

import importlib.util
import json as jsonlib
from typing import Any

import pytest
from kjournal.model import Append
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import RecordMetadata
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

from tests.unit.wire import catalog


@pytest.mark.parametrize(("name", "expected"), list(catalog.PAYLOADS.items()))
def test_record_values_decode_and_reencode_byte_for_byte(name, expected):
    payload_type, events = expected
    data = catalog.read(name)
    assert decode_events(payload_type, data) == events
    assert encode_events(events) == (payload_type, data)


@pytest.mark.parametrize(("name", "expected"), list(catalog.PAYLOADS_DECODE_ONLY.items()))
def test_older_and_lenient_record_values_decode(name, expected):
    payload_type, events = expected
    assert decode_events(payload_type, catalog.read(name)) == events


@pytest.mark.parametrize(("name", "events"), list(catalog.BINARY_CONTAINERS.items()))
def test_binary_container_v1_decodes_and_reencodes(name, events):
    data = catalog.read(f"v1-events-{name}.bin")
    assert decode_binary_container(data) == events
    assert encode_binary_container(events) == data


@pytest.mark.parametrize(("name", "events"), list(catalog.BINARY_CONTAINERS.items()))
def test_binary_container_v0_decodes_without_metadata(name, events):
    data = catalog.read(f"v0-events-{name}.bin")
    assert decode_binary_container(data) == Events(events.events)


def test_single_binary_event_is_33_bytes_as_in_the_scala_fixture():
    # journal/src/test/resources/.../v1-events-binary.bin: 8 + (4 + 10) + (1 + 4 + 6)
    data = catalog.read("v1-events-binary.bin")
    assert int.from_bytes(data[5:9], "big") == 33
    assert data[-2:] == b"{}"


@pytest.mark.parametrize(("name", "header"), list(catalog.HEADERS.items()))
def test_action_headers_decode_and_reencode_byte_for_byte(name, header):
    data = catalog.read(name)
    assert decode_action_header(data) == header
    assert encode_action_header(header) == data


@pytest.mark.parametrize(("name", "header"), list(catalog.HEADERS_DECODE_ONLY.items()))
def test_legacy_and_unknown_action_headers_decode(name, header):
    assert decode_action_header(catalog.read(name)) == header


def _consumed(document: dict[str, Any]) -> ConsumedRecord:
    value = document["value"]
    return ConsumedRecord(
        topic=document["topic"],
        partition=document["partition"],
        offset=document["offset"],
        key=document["key"].encode(),
        value=None if value is None else catalog.read(value),
        headers=[(name, text.encode()) for name, text in document["headers"]],
        timestamp_ms=document["timestamp_ms"],
    )


RECORDS = sorted(path.name for path in catalog.FIXTURES.glob("Record-*.json"))


@pytest.mark.parametrize("name", RECORDS)
def test_records_decode_and_reencode_to_the_same_parts(name):
    document = jsonlib.loads(catalog.read(name))
    consumed = _consumed(document)

    decoded = decode_action_record(consumed)

    assert decoded is not None
    assert decoded.partition_offset.partition == 3
    assert decoded.offset == 42
    action = decoded.action
    assert action.key == Key(topic="journal", id=document["key"])
    assert action.timestamp == catalog.RECORD_TIMESTAMP
    parts = encode_action(action)
    assert parts.topic == consumed.topic
    assert parts.key == consumed.key
    assert parts.value == consumed.value
    assert parts.headers == list(consumed.headers)
    assert parts.timestamp_ms == consumed.timestamp_ms


@pytest.mark.parametrize("name", sorted(catalog.RECORD_EVENTS))
def test_appends_built_from_events_match_the_golden_records(name):
    document = jsonlib.loads(catalog.read(f"Record-{name}.json"))
    decoded = decode_action_record(_consumed(document))
    assert decoded is not None
    assert isinstance(decoded.action, Append)
    header = decoded.action.header
    events = catalog.RECORD_EVENTS[name]

    built = append_action(
        decoded.action.key,
        catalog.RECORD_TIMESTAMP,
        events,
        RecordMetadata(header=header.metadata, payload=events.metadata),
        dict(decoded.action.headers),
        header.origin,
        header.version,
    )

    assert built == decoded.action
    assert decode_events(header.payload_type, decoded.action.payload) == events


def test_golden_record_of_each_action_kind_exists():
    kinds = {
        jsonlib.loads(jsonlib.loads(catalog.read(n))["headers"][0][1]).popitem()[0] for n in RECORDS
    }
    assert kinds == {"append", "delete", "purge", "mark"}


def test_the_golden_files_are_what_make_fixtures_writes(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_fixtures", catalog.FIXTURES / "make_fixtures.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = sorted(path.name for path in tmp_path.iterdir())
    assert len(made) > 60
    for name in made:
        assert (tmp_path / name).read_bytes() == catalog.read(name), name
