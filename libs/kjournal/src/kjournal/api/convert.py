"""HTTP bodies ↔ model values, both directions, so the services and the client agree by construction.

Request → model raises the specific kjournal error (EmptyAppend, SeqNrOrderError, InvalidPayload,
InvalidDuration) naming the offending event as `events[i]`. Events stream as plain dicts built by
hand (`event_record_to_json`): a read may emit millions, and a pydantic model per line would
dominate its cost; `EventOut` documents the same shape.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from typing import Any
from typing import cast

from kjournal.api.schemas import AppendOutcomeOut
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import AppendResponse
from kjournal.api.schemas import ConflictOut
from kjournal.api.schemas import EventIn
from kjournal.api.schemas import ExpiryOut
from kjournal.api.schemas import JournalStatusOut
from kjournal.api.schemas import PartitionReplicationOut
from kjournal.api.schemas import ReplicationOut
from kjournal.api.schemas import format_timestamp
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
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload
from kjournal.model.conflict import Conflict
from kjournal.model.durations import expire_after_from_json
from kjournal.model.durations import format_duration
from kjournal.model.durations import parse_duration
from kjournal.model.head import Expiry
from kjournal.model.replication import PartitionReplication
from kjournal.model.replication import TopicReplication
from kjournal.model.results import AppendOutcome
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus
from kjournal.model.results import Outcome

__all__ = [
    "AppendArgs",
    "append_args",
    "append_outcome_from_out",
    "append_outcome_json",
    "append_outcome_out",
    "append_record_json",
    "append_request_body",
    "append_response",
    "append_response_json",
    "append_result",
    "event_json",
    "event_record_from_json",
    "event_record_to_json",
    "format_timestamp",
    "journal_status_from_out",
    "journal_status_out",
    "record_json",
    "replication_from_out",
    "replication_out",
]


@dataclass(frozen=True, slots=True)
class AppendArgs:
    """What `Journal.append` takes, from one append body."""

    events: Events
    metadata: RecordMetadata
    headers: dict[str, str]


def _payload(index: int, event: EventIn) -> Payload | None:
    kind = event.payload_type
    value = event.payload
    where = f"events[{index}]"
    if value is None:
        if kind is not None:
            raise InvalidPayload(f"{where} has payloadType {kind} but no payload")
        return None
    if kind is None or kind == "json":
        return JsonPayload(cast(JsonValue, value))
    if not isinstance(value, str):
        raise InvalidPayload(f"{where}.payload must be a string for payloadType {kind}")
    if kind == "text":
        return TextPayload(value)
    try:
        return BinaryPayload(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise InvalidPayload(f"{where}.payload is not valid base64: {exc}") from None


def append_args(request: AppendRequest) -> AppendArgs:
    """The events, metadata and headers an append body stands for; InvalidInput subclasses if
    it is not valid."""
    if not request.events:
        raise EmptyAppend("an append needs at least one event (events is empty)")
    previous: int | None = None
    events = []
    for index, item in enumerate(request.events):
        if previous is not None and item.seq_nr <= previous:
            raise SeqNrOrderError(
                f"seqNrs must strictly increase within an append: events[{index}].seqNr is "
                f"{item.seq_nr} after {previous}"
            )
        previous = item.seq_nr
        events.append(Event(SeqNr(item.seq_nr), frozenset(item.tags), _payload(index, item)))
    try:
        expire_after = expire_after_from_json(request.expire_after)
    except InvalidDuration as exc:
        raise InvalidDuration(f"expireAfter: {exc}") from None
    metadata_in = request.metadata
    header_data = metadata_in.header if metadata_in is not None else None
    payload_data = metadata_in.payload if metadata_in is not None else None
    payload_metadata = PayloadMetadata(expire_after, payload_data)
    metadata = RecordMetadata(header=HeaderMetadata(header_data), payload=payload_metadata)
    return AppendArgs(Events(tuple(events), payload_metadata), metadata, dict(request.headers))


def _payload_json(payload: Payload | None) -> tuple[str | None, JsonValue]:
    if payload is None:
        return None, None
    if isinstance(payload, BinaryPayload):
        return "binary", base64.b64encode(payload.value).decode("ascii")
    if isinstance(payload, TextPayload):
        return "text", payload.value
    return "json", payload.value


def append_request_body(
    events: Sequence[Event] | Events,
    metadata: RecordMetadata | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, JsonValue]:
    """The JSON body of an append request (the client's half of `append_args`)."""
    items = events.events if isinstance(events, Events) else tuple(events)
    body_events: list[JsonValue] = []
    for event in items:
        item: dict[str, JsonValue] = {"seqNr": event.seq_nr}
        if event.tags:
            item["tags"] = cast(JsonValue, sorted(event.tags))
        kind, value = _payload_json(event.payload)
        if kind is not None:
            item["payloadType"] = kind
            item["payload"] = value
        body_events.append(item)
    body: dict[str, JsonValue] = {"events": body_events}
    payload_metadata = metadata.payload if metadata is not None else PayloadMetadata()
    if isinstance(events, Events) and payload_metadata == PayloadMetadata():
        payload_metadata = events.metadata
    header_data = metadata.header.data if metadata is not None else None
    if header_data is not None or payload_metadata.data is not None:
        body["metadata"] = {"header": header_data, "payload": payload_metadata.data}
    if payload_metadata.expire_after is not None:
        body["expireAfter"] = format_duration(payload_metadata.expire_after)
    if headers:
        body["headers"] = dict(headers)
    return body


def append_response(result: AppendResult) -> AppendResponse:
    # Kafka keeps milliseconds: answer with the timestamp reads will return.
    timestamp = result.timestamp.replace(microsecond=result.timestamp.microsecond // 1000 * 1000)
    return AppendResponse.model_validate(
        {
            "partition": result.partition_offset.partition,
            "offset": result.partition_offset.offset,
            "from": result.range.from_,
            "to": result.range.to,
            "timestamp": timestamp,
            "replay": result.replay,
            "seqNr": result.journal_seq_nr,
        }
    )


def append_response_json(result: AppendResult) -> bytes:
    """`append_response(result)` as JSON, written directly: the writer's hot path answers with it,
    and a pydantic model would be most of the cost of writing it."""
    position = result.partition_offset
    return (
        f'{{"partition":{position.partition},"offset":{position.offset},'
        f'"from":{result.range.from_},"to":{result.range.to},'
        f'"timestamp":"{format_timestamp(result.timestamp)}",'
        f'"replay":{"true" if result.replay else "false"},"seqNr":{result.journal_seq_nr}}}'
    ).encode()


def append_result(response: AppendResponse) -> AppendResult:
    return AppendResult(
        PartitionOffset(response.partition, response.offset),
        SeqRange(SeqNr(response.from_), SeqNr(response.to)),
        response.timestamp,
        replay=response.replay,
        seq_nr=None if response.seq_nr is None else SeqNr(response.seq_nr),
    )


def append_outcome_out(outcome: AppendOutcome) -> AppendOutcomeOut:
    return AppendOutcomeOut.model_validate(
        {
            "outcome": outcome.outcome.value,
            "seqNr": outcome.seq_nr,
            "partition": outcome.position.partition,
            "offset": outcome.position.offset,
            "timestamp": outcome.timestamp,
            "expected": outcome.expected,
        }
    )


def append_outcome_json(outcome: AppendOutcome) -> dict[str, Any]:
    """`append_outcome_out` as the JSON object it serializes to, without building the model
    (the reader answers every append's outcome)."""
    return {
        "outcome": outcome.outcome.value,
        "seqNr": outcome.seq_nr,
        "partition": outcome.position.partition,
        "offset": outcome.position.offset,
        "timestamp": format_timestamp(outcome.timestamp),
        "expected": outcome.expected,
    }


def append_outcome_from_out(out: AppendOutcomeOut) -> AppendOutcome:
    return AppendOutcome(
        Outcome(out.outcome),
        out.seq_nr,
        PartitionOffset(out.partition, out.offset),
        out.timestamp,
        out.expected,
    )


def event_record_to_json(record: EventRecord) -> dict[str, Any]:
    """One line of an events stream (the shape of schemas.EventOut): `event_json` and
    `record_json` together, written out in one literal because a journal read makes one per
    event (two dicts merged cost a third more)."""
    event = record.event
    kind, value = _payload_json(event.payload)
    metadata = record.metadata
    expire_after = metadata.payload.expire_after
    return {
        "seqNr": event.seq_nr,
        "timestamp": format_timestamp(record.timestamp),
        "partition": record.partition_offset.partition,
        "offset": record.partition_offset.offset,
        "tags": sorted(event.tags) if event.tags else [],
        "payloadType": kind,
        "payload": value,
        "metadata": {"header": metadata.header.data, "payload": metadata.payload.data},
        "expireAfter": None if expire_after is None else format_duration(expire_after),
        "headers": dict(record.headers),
        "origin": record.origin,
        "version": record.version,
    }


def event_json(event: Event) -> dict[str, Any]:
    """The members of an event's line that are the event's own (seqNr, tags, payload)."""
    kind, value = _payload_json(event.payload)
    return {
        "seqNr": event.seq_nr,
        "tags": sorted(event.tags) if event.tags else [],
        "payloadType": kind,
        "payload": value,
    }


def record_json(record: EventRecord) -> dict[str, Any]:
    """The members of an event's line that every event of its append shares: its record's."""
    return append_record_json(
        record.timestamp,
        record.partition_offset,
        record.metadata,
        record.headers,
        record.origin,
        record.version,
    )


def append_record_json(
    timestamp: datetime,
    position: PartitionOffset,
    metadata: RecordMetadata,
    headers: Mapping[str, str],
    origin: str | None,
    version: str | None,
) -> dict[str, Any]:
    """`record_json` of an append's events, from the append's own parts."""
    expire_after = metadata.payload.expire_after
    return {
        "timestamp": format_timestamp(timestamp),
        "partition": position.partition,
        "offset": position.offset,
        "metadata": {"header": metadata.header.data, "payload": metadata.payload.data},
        "expireAfter": None if expire_after is None else format_duration(expire_after),
        "headers": dict(headers),
        "origin": origin,
        "version": version,
    }


def _parse_timestamp(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def event_record_from_json(value: Mapping[str, Any]) -> EventRecord:
    """An events-stream line back into an EventRecord; FormatError if it is not one."""
    try:
        kind = value.get("payloadType")
        raw = value.get("payload")
        payload: Payload | None
        if raw is None:
            payload = None
        elif kind == "binary":
            payload = BinaryPayload(base64.b64decode(raw, validate=True))
        elif kind == "text":
            payload = TextPayload(str(raw))
        else:
            payload = JsonPayload(raw)
        metadata = value.get("metadata") or {}
        expire_after_text = value.get("expireAfter")
        expire_after = None if expire_after_text is None else parse_duration(expire_after_text)
        return EventRecord(
            event=Event(SeqNr(int(value["seqNr"])), frozenset(value.get("tags") or ()), payload),
            timestamp=_parse_timestamp(value["timestamp"]),
            partition_offset=PartitionOffset(int(value["partition"]), int(value["offset"])),
            origin=value.get("origin"),
            version=value.get("version"),
            metadata=RecordMetadata(
                header=HeaderMetadata(metadata.get("header")),
                payload=PayloadMetadata(expire_after, metadata.get("payload")),
            ),
            headers=dict(value.get("headers") or {}),
        )
    except (KeyError, TypeError, ValueError, binascii.Error, KJournalError) as exc:
        raise FormatError(f"not an event line: {exc!r}") from exc


def journal_status_out(status: JournalStatus) -> JournalStatusOut:
    """The status body of an existing journal (status.seq_nr is not None)."""
    assert status.seq_nr is not None
    expiry = status.expiry
    return JournalStatusOut(
        topic=status.key.topic,
        id=status.key.id,
        seq_nr=status.seq_nr,
        delete_to=status.delete_to,
        expiry=None
        if expiry is None
        else ExpiryOut(after=format_duration(expiry.after), on=expiry.on),
        partition=status.partition,
        end_offset=status.end_offset,
        pointer2=status.pointer2,
        unreplicated_actions=status.unreplicated_actions,
        unreplicated_offsets=status.unreplicated_offsets,
        unreplicated_duplicates=status.unreplicated_duplicates,
        conflicts=None
        if status.conflicts is None
        else [
            ConflictOut(
                seq_nr=c.seq_nr,
                partition=c.dropped.partition,
                offset=c.dropped.offset,
                kept_offset=c.kept.offset,
                detected_at=c.detected_at,
            )
            for c in status.conflicts
        ],
        quarantine_known=status.quarantine_known,
    )


def _expiry(out: ExpiryOut | None) -> Expiry | None:
    if out is None:
        return None
    after: ExpireAfter = parse_duration(out.after)
    on: date = out.on
    return Expiry(after, on)


def journal_status_from_out(out: JournalStatusOut) -> JournalStatus:
    return JournalStatus(
        key=Key(out.topic, out.id),
        seq_nr=SeqNr(out.seq_nr),
        delete_to=None if out.delete_to is None else SeqNr(out.delete_to),
        expiry=_expiry(out.expiry),
        partition=out.partition,
        end_offset=out.end_offset,
        pointer2=out.pointer2,
        unreplicated_actions=out.unreplicated_actions,
        unreplicated_offsets=out.unreplicated_offsets,
        unreplicated_duplicates=out.unreplicated_duplicates,
        conflicts=None
        if out.conflicts is None
        else tuple(
            Conflict(
                topic=out.topic,
                id=out.id,
                seq_nr=SeqNr(c.seq_nr),
                dropped=PartitionOffset(c.partition, c.offset),
                kept=PartitionOffset(c.partition, c.kept_offset),
                detected_at=c.detected_at,
            )
            for c in out.conflicts
        ),
        quarantine_known=out.quarantine_known,
    )


def replication_out(status: TopicReplication) -> ReplicationOut:
    """The body of a topic's replication status."""
    return ReplicationOut(
        topic=status.topic,
        partitions=[
            PartitionReplicationOut(
                partition=p.partition,
                beginning_offset=p.beginning_offset,
                end_offset=p.end_offset,
                pointer2=p.pointer2,
                lag=p.lag,
            )
            for p in status.partitions
        ],
        lag=status.lag,
    )


def replication_from_out(out: ReplicationOut) -> TopicReplication:
    return TopicReplication(
        out.topic,
        tuple(
            PartitionReplication(p.partition, p.beginning_offset, p.end_offset, p.pointer2)
            for p in out.partitions
        ),
    )
