"""Events and event records built without their `__init__`, for the read hot paths.

A frozen, slotted dataclass's `__init__` sets each field through `object.__setattr__` and runs
its checks: twice the cost of building the value from `object.__new__` and the slot descriptors,
which frozen dataclasses leave alone. The callers check what `__init__` would (a seqNr in
1..2^63 - 1) before they call these; tests/unit/test_performance_shortcuts.py fails when the
fields or Event's checks change (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from kjournal.model.event import Event
from kjournal.model.event import EventRecord
from kjournal.model.metadata import RecordMetadata
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.payload import Payload

__all__ = [
    "EVENT_FIELDS",
    "EVENT_RECORD_FIELDS",
    "EVENT_RECORD_SETTERS",
    "EVENT_SETTERS",
    "event",
    "event_record",
]

EVENT_FIELDS: Final = ("seq_nr", "tags", "payload")
EVENT_RECORD_FIELDS: Final = (
    "event",
    "timestamp",
    "partition_offset",
    "origin",
    "version",
    "metadata",
    "headers",
)
EVENT_SETTERS: Final = tuple(Event.__dict__[name].__set__ for name in EVENT_FIELDS)
"""The slot setters of EVENT_FIELDS, for a loop that inlines `event` (cassandra's row decoder)."""
EVENT_RECORD_SETTERS: Final = tuple(
    EventRecord.__dict__[name].__set__ for name in EVENT_RECORD_FIELDS
)
_new = object.__new__
_SET_SEQ_NR, _SET_TAGS, _SET_PAYLOAD = EVENT_SETTERS
(
    _SET_EVENT,
    _SET_TIMESTAMP,
    _SET_POSITION,
    _SET_ORIGIN,
    _SET_VERSION,
    _SET_METADATA,
    _SET_HEADERS,
) = EVENT_RECORD_SETTERS


def event(seq_nr: int, tags: frozenset[str], payload: Payload | None) -> Event:
    """`Event(seq_nr, tags, payload)` for a seqNr the caller checked is in range."""
    value = _new(Event)
    _SET_SEQ_NR(value, seq_nr)
    _SET_TAGS(value, tags)
    _SET_PAYLOAD(value, payload)
    return value


def event_record(
    value: Event,
    timestamp: datetime,
    position: PartitionOffset,
    origin: str | None,
    version: str | None,
    metadata: RecordMetadata,
    headers: Mapping[str, str],
) -> EventRecord:
    """`EventRecord(...)` with every field given."""
    record = _new(EventRecord)
    _SET_EVENT(record, value)
    _SET_TIMESTAMP(record, timestamp)
    _SET_POSITION(record, position)
    _SET_ORIGIN(record, origin)
    _SET_VERSION(record, version)
    _SET_METADATA(record, metadata)
    _SET_HEADERS(record, headers)
    return record
