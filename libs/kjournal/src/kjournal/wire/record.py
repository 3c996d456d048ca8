"""Kafka records <-> actions, independent of any Kafka client library.

A journal record: topic = key.topic, key = key.id as UTF-8, timestamp = the action's time in
milliseconds, first header `journal.action` (JSON, see action_header), then (appends only) the user
headers as UTF-8 strings; value = the events container for an append, null otherwise. The
producer adds the W3C trace headers of its span (`traceparent`, `tracestate`) when tracing is on;
they are never user headers (`RESERVED_HEADERS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from kjournal.errors import FormatError
from kjournal.errors import HeaderFormatError
from kjournal.errors import InvalidInput
from kjournal.errors import InvalidKey
from kjournal.model import ACTION_HEADER
from kjournal.model import Action
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import AppendHeader
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Events
from kjournal.model import HeaderMetadata
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import Purge
from kjournal.model import RecordMetadata
from kjournal.model.action import RESERVED_HEADERS
from kjournal.wire.action_header import decode_action_header
from kjournal.wire.action_header import encode_action_header
from kjournal.wire.events import encode_events

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_EMPTY_HEADER_METADATA = HeaderMetadata()
_EMPTY_PAYLOAD_METADATA = PayloadMetadata()


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """What decoding needs from a consumed Kafka record. `timestamp_ms` None (or negative, Kafka's
    "no timestamp") means the record has none."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes]]
    timestamp_ms: int | None


@dataclass(frozen=True, slots=True)
class ProducerRecordParts:
    """What to hand a producer. No partition: the client's default (murmur2) partitioner picks it
    from the key, see kjournal.wire.partitioner."""

    topic: str
    key: bytes
    value: bytes | None
    headers: list[tuple[str, bytes]]
    timestamp_ms: int


def timestamp_to_ms(timestamp: datetime) -> int:
    """Milliseconds since the epoch (sub-millisecond part dropped); the datetime must be aware."""
    if timestamp.tzinfo is None or timestamp.utcoffset() is None:
        raise InvalidInput(f"timestamp must be timezone-aware, got {timestamp!r}")
    millis = (timestamp - _EPOCH) // _ONE_MS
    if millis < 0:
        raise InvalidInput(f"Kafka timestamps cannot be before 1970, got {timestamp.isoformat()}")
    return millis


def timestamp_from_ms(millis: int) -> datetime:
    """The UTC datetime of a Kafka timestamp."""
    return _EPOCH + timedelta(milliseconds=millis)


def decode_action_record(record: ConsumedRecord) -> ActionRecord | None:
    """The action in a journal record, or None for records to skip.

    Skipped (forward compatibility, as the Scala reader): no key (or an empty one), no timestamp,
    no `journal.action` header, an action kind this version does not know, an append with a null
    value. HeaderFormatError for a `journal.action` header that is present but invalid, or an
    append's user header that is not UTF-8. The append's value is not decoded here.
    """
    if not record.key or record.timestamp_ms is None or record.timestamp_ms < 0:
        return None
    raw_header = next((value for name, value in record.headers if name == ACTION_HEADER), None)
    if raw_header is None:
        return None
    header = decode_action_header(raw_header)
    if header is None:
        return None
    # Kafka's StringDeserializer replaces malformed UTF-8 rather than failing.
    key = Key(topic=record.topic, id=record.key.decode("utf-8", "replace"))
    try:
        timestamp = timestamp_from_ms(record.timestamp_ms)
    except OverflowError as exc:
        raise FormatError(f"record timestamp {record.timestamp_ms} is out of range") from exc
    action: Action
    if isinstance(header, AppendHeader):
        if record.value is None:
            return None
        action = Append(key, timestamp, header, bytes(record.value), _user_headers(record))
    elif isinstance(header, MarkHeader):
        action = Mark(key, timestamp, header)
    elif isinstance(header, DeleteHeader):
        action = Delete(key, timestamp, header)
    else:
        action = Purge(key, timestamp, header)
    return ActionRecord(action, PartitionOffset(record.partition, record.offset))


def encode_action(action: Action) -> ProducerRecordParts:
    """The Kafka record for an action."""
    try:
        key = action.key.id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidKey(f"journal id is not valid Unicode: {action.key.id!r}") from exc
    headers = [(ACTION_HEADER, encode_action_header(action.header))]
    value: bytes | None = None
    if isinstance(action, Append):
        for name, text in action.headers.items():
            if name in RESERVED_HEADERS:
                raise InvalidInput(f"{name} is reserved and cannot be a user header")
            try:
                headers.append((name, text.encode("utf-8")))
            except UnicodeEncodeError as exc:
                raise InvalidInput(f"header {name!r} is not valid Unicode") from exc
        value = action.payload
    return ProducerRecordParts(
        topic=action.key.topic,
        key=key,
        value=value,
        headers=headers,
        timestamp_ms=timestamp_to_ms(action.timestamp),
    )


def append_action(
    key: Key,
    timestamp: datetime,
    events: Events,
    metadata: RecordMetadata | None = None,
    headers: Mapping[str, str] | None = None,
    origin: str | None = None,
    version: str | None = None,
    expect: int | None = None,
) -> Append:
    """Build an Append: encode the events and fill in its header (range, payloadType, metadata,
    the condition `expect`: see fold/append_rule.py).

    `metadata.header` goes into the `journal.action` header; `metadata.payload` into the value.
    The payload half may come with `events.metadata` instead; if both are non-empty they must
    be equal (InvalidInput otherwise).
    """
    if metadata is not None:
        payload_metadata = metadata.payload
        if payload_metadata != _EMPTY_PAYLOAD_METADATA and payload_metadata != events.metadata:
            if events.metadata != _EMPTY_PAYLOAD_METADATA:
                raise InvalidInput(
                    "payload metadata given twice, differently: in events and in metadata"
                )
            events = replace(events, metadata=payload_metadata)
        header_metadata = metadata.header
    else:
        header_metadata = _EMPTY_HEADER_METADATA
    payload_type, payload = encode_events(events)
    header = AppendHeader(
        range=events.range,
        payload_type=payload_type,
        metadata=header_metadata,
        origin=origin,
        version=version,
        expect=expect,
    )
    return Append(key, timestamp, header, payload, dict(headers) if headers else {})


def _user_headers(record: ConsumedRecord) -> dict[str, str]:
    result: dict[str, str] = {}
    for name, value in record.headers:
        if name in RESERVED_HEADERS:
            continue
        try:
            result[name] = bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HeaderFormatError(f"header {name!r} is not UTF-8") from exc
    return result
