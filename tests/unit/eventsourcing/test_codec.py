"""A stored event round-trips through a kjournal event exactly; what is not one is a DataError."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from uuid import uuid4

import pytest
from eventsourcing.persistence import DataError
from eventsourcing.persistence import StoredEvent
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal_eventsourcing.codec import from_record
from kjournal_eventsourcing.codec import seq_nr
from kjournal_eventsourcing.codec import to_event


def _record(event: Event) -> EventRecord:
    return EventRecord(event, datetime(2026, 11, 28, tzinfo=UTC), PartitionOffset(0, 0))


@pytest.mark.parametrize("state", [b'{"a":1}', "żółw 🐢".encode(), b"", bytes(range(256))], ids=str)
def test_a_stored_event_comes_back_byte_for_byte(state: bytes) -> None:
    stored = StoredEvent(uuid4(), 7, "bank:Event", state)
    event = to_event(stored)
    assert event.seq_nr == 8
    assert from_record(stored.originator_id, _record(event)) == stored


def test_text_state_stays_readable_and_other_state_is_base64() -> None:
    assert to_event(StoredEvent("a", 0, "t", b"{}")).payload == JsonPayload(
        {"topic": "t", "state": "{}"}
    )
    binary = to_event(StoredEvent("a", 0, "t", b"\xff")).payload
    assert isinstance(binary, JsonPayload)
    assert binary.value == {"topic": "t", "stateBase64": "/w=="}


def test_versions_start_at_seq_nr_1() -> None:
    assert seq_nr(0) == 1
    with pytest.raises(DataError, match="negative"):
        seq_nr(-1)


@pytest.mark.parametrize(
    "payload",
    [
        None,
        TextPayload("x"),
        JsonPayload([1]),
        JsonPayload({"state": "x"}),
        JsonPayload({"topic": "t"}),
    ],
    ids=["none", "text", "list", "no topic", "no state"],
)
def test_an_event_that_is_not_a_stored_event_is_a_data_error(
    payload: TextPayload | JsonPayload | None,
) -> None:
    with pytest.raises(DataError):
        from_record("a", _record(Event(SeqNr(1), payload=payload)))
