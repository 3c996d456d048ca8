"""Request bodies → model values (with the specific errors), and events ↔ NDJSON lines."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest
from kjournal.api.convert import append_args
from kjournal.api.convert import append_request_body
from kjournal.api.convert import append_response
from kjournal.api.convert import append_response_json
from kjournal.api.convert import append_result
from kjournal.api.convert import event_record_from_json
from kjournal.api.convert import event_record_to_json
from kjournal.api.convert import journal_status_from_out
from kjournal.api.convert import journal_status_out
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import EventOut
from kjournal.errors import EmptyAppend
from kjournal.errors import FormatError
from kjournal.errors import InvalidDuration
from kjournal.errors import InvalidPayload
from kjournal.errors import KJournalError
from kjournal.errors import SeqNrOrderError
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload
from kjournal.model.head import Expiry
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus
from pydantic import ValidationError


def request(**body: Any) -> AppendRequest:
    return AppendRequest.model_validate(body)


def test_a_full_request_becomes_a_batch():
    batch = append_args(
        request(
            events=[
                {"seqNr": 1, "payload": {"a": [1, 2]}, "tags": ["x", "y", "x"]},
                {"seqNr": 2, "payloadType": "text", "payload": "hi"},
                {"seqNr": 5, "payloadType": "binary", "payload": "AAH/"},
                {"seqNr": 6},
            ],
            metadata={"header": {"h": 1}, "payload": "p"},
            expireAfter="30 minutes",
            headers={"k": "v"},
        )
    )
    assert [e.seq_nr for e in batch.events.events] == [1, 2, 5, 6]
    assert batch.events.events[0] == Event(
        SeqNr(1), frozenset({"x", "y"}), JsonPayload({"a": [1, 2]})
    )
    assert batch.events.events[1].payload == TextPayload("hi")
    assert batch.events.events[2].payload == BinaryPayload(b"\x00\x01\xff")
    assert batch.events.events[3].payload is None
    assert batch.metadata == RecordMetadata(
        HeaderMetadata({"h": 1}), PayloadMetadata(ExpireAfter.of(30, "minutes"), "p")
    )
    assert batch.events.metadata == batch.metadata.payload
    assert batch.headers == {"k": "v"}


def test_expire_after_may_be_milliseconds():
    batch = append_args(request(events=[{"seqNr": 1}], expireAfter=60_000))
    assert batch.metadata.payload.expire_after == ExpireAfter.of(1, "minute")


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        ({"events": []}, EmptyAppend, "at least one event"),
        ({"events": [{"seqNr": 3}, {"seqNr": 2}]}, SeqNrOrderError, "events[1].seqNr is 2 after 3"),
        ({"events": [{"seqNr": 3}, {"seqNr": 3}]}, SeqNrOrderError, "events[1]"),
        (
            {"events": [{"seqNr": 1, "payloadType": "binary", "payload": "@@"}]},
            InvalidPayload,
            "events[0].payload is not valid base64",
        ),
        (
            {"events": [{"seqNr": 1}, {"seqNr": 2, "payloadType": "text", "payload": 5}]},
            InvalidPayload,
            "events[1].payload must be a string",
        ),
        ({"events": [{"seqNr": 1, "payloadType": "text"}]}, InvalidPayload, "no payload"),
        ({"events": [{"seqNr": 1}], "expireAfter": "later"}, InvalidDuration, "expireAfter"),
        ({"events": [{"seqNr": 1}], "expireAfter": "0 days"}, InvalidDuration, "expireAfter"),
    ],
)
def test_invalid_batches_raise_the_specific_error(body: dict[str, Any], error: type, message: str):
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        append_args(AppendRequest.model_validate(body))


@pytest.mark.parametrize(
    "body",
    [
        {"events": [{"seqNr": 0}]},
        {"events": [{"seqNr": 2**63}]},
        {"events": [{"seqNr": 1, "payloadType": "xml"}]},
        {"events": [{"seqNr": 1}], "unknown": 1},
        {"events": [{"seqNr": 1, "tags": "a"}]},
        {"events": [{"seqNr": 1}], "headers": {"a": 1}},
    ],
)
def test_shapes_are_checked_by_the_schema(body: dict[str, Any]):
    with pytest.raises(ValidationError):
        AppendRequest.model_validate(body)


def test_the_client_body_round_trips_through_the_server_schema():
    events = Events(
        (
            Event(SeqNr(7), frozenset({"b", "a"}), JsonPayload({"z": None})),
            Event(SeqNr(8), payload=TextPayload("t")),
            Event(SeqNr(9), payload=BinaryPayload(bytes(range(256)))),
            Event(SeqNr(10)),
        ),
        PayloadMetadata(ExpireAfter.of(3, "days"), {"p": True}),
    )
    metadata = RecordMetadata(HeaderMetadata([1, 2]), events.metadata)
    body = append_request_body(events, metadata, {"h": "v"})
    batch = append_args(AppendRequest.model_validate(body))
    assert batch.events == events
    assert batch.metadata == metadata
    assert batch.headers == {"h": "v"}


def _record(payload: Any = None, **extra: Any) -> EventRecord:
    return EventRecord(
        event=Event(SeqNr(3), frozenset({"t"}), payload),
        timestamp=datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        partition_offset=PartitionOffset(2, 41),
        origin="host-1",
        version="kjournal-python/0.1.0",
        metadata=RecordMetadata(
            HeaderMetadata({"h": 1}), PayloadMetadata(ExpireAfter.of(1, "day"))
        ),
        headers={"k": "v"},
        **extra,
    )


@pytest.mark.parametrize(
    "payload",
    [
        None,
        JsonPayload({"a": [1, "x", None]}),
        JsonPayload(None),
        TextPayload("ü"),
        BinaryPayload(b"\x00\xff"),
    ],
)
def test_event_lines_round_trip(payload: Any):
    record = _record(payload)
    line = event_record_to_json(record)
    EventOut.model_validate(line)  # the documented shape
    back = event_record_from_json(line)
    if payload == JsonPayload(None):  # a JSON null payload is "no payload", as in the wire format
        assert back.event.payload is None
    else:
        assert back == record
    assert line["timestamp"] == "2025-01-02T03:04:05.678Z"
    assert line["expireAfter"] == "1 day"


def test_a_line_that_is_not_an_event_is_a_format_error():
    with pytest.raises(FormatError):
        event_record_from_json({"seqNr": "x"})
    with pytest.raises(FormatError):
        event_record_from_json({"seqNr": 1, "timestamp": "2025-01-01T00:00:00Z"})


def test_append_results_round_trip_with_millisecond_timestamps():
    result = AppendResult(
        PartitionOffset(1, 2),
        SeqRange(SeqNr(3), SeqNr(4)),
        datetime(2025, 1, 1, 0, 0, 0, 123456, tzinfo=UTC),
    )
    response = append_response(result)
    assert response.model_dump(mode="json")["from"] == 3
    back = append_result(type(response).model_validate_json(response.model_dump_json()))
    assert back.timestamp == datetime(2025, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)
    assert (back.partition_offset, back.range) == (result.partition_offset, result.range)


def test_the_append_answer_written_directly_is_the_models_json():
    for timestamp in (
        datetime(2025, 1, 1, 0, 0, 0, 123999, tzinfo=UTC),
        datetime(2025, 6, 30, 23, 59, 59, tzinfo=UTC),
        datetime(2025, 1, 1, 2, 0, 0, 5000, tzinfo=timezone(timedelta(hours=2))),
    ):
        result = AppendResult(
            PartitionOffset(7, 2**40), SeqRange(SeqNr(3), SeqNr(2**63 - 1)), timestamp
        )
        assert append_response_json(result) == append_response(result).model_dump_json().encode()


def test_status_round_trips():
    status = JournalStatus(
        key=Key("journal", "a/b"),
        seq_nr=SeqNr(10),
        delete_to=SeqNr(4),
        expiry=Expiry(ExpireAfter.of(2, "days"), date(2025, 3, 1)),
        partition=3,
        end_offset=100,
        pointer2=90,
        unreplicated_actions=2,
        unreplicated_offsets=9,
    )
    out = journal_status_out(status)
    assert out.model_dump(mode="json")["expiry"] == {"after": "2 days", "on": "2025-03-01"}
    assert journal_status_from_out(type(out).model_validate_json(out.model_dump_json())) == status


def test_kjournal_errors_are_the_only_errors_conversion_raises():
    with pytest.raises(KJournalError):
        append_args(request(events=[{"seqNr": 1, "payloadType": "binary", "payload": "x"}]))
