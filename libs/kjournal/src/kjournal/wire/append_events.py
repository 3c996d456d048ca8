"""An append's events as readers return them and rows store them: the one place a payload is
decoded into `EventRecord`s (reads, outcomes, the topic feed, the read side's fold and the
replicator)."""

from __future__ import annotations

from dataclasses import dataclass

from kjournal.errors import FormatError
from kjournal.errors import InvalidInput
from kjournal.model import Append
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import PartitionOffset
from kjournal.model import RecordMetadata
from kjournal.model.fast import event_record
from kjournal.wire.events import decode_events

__all__ = ["DECODE_ERRORS", "Decoded", "decode_append", "poison_reason"]

DECODE_ERRORS = (FormatError, InvalidInput)
"""What decoding a payload that is not what its header says raises."""


@dataclass(frozen=True, slots=True)
class Decoded:
    events: tuple[EventRecord, ...]
    expire_after: ExpireAfter | None


def decode_append(append: Append, position: PartitionOffset) -> Decoded:
    """The append's events at `position`, each with its record's timestamp, origin, version,
    metadata and user headers. FormatError (or InvalidInput) if the payload does not decode as
    its header's payload type, or holds other seqNrs than the header's range."""
    header = append.header
    events = _payload_events(append)
    metadata = RecordMetadata(header.metadata, events.metadata)
    timestamp, origin, version, headers = (
        append.timestamp,
        header.origin,
        header.version,
        append.headers,
    )
    return Decoded(
        tuple(
            event_record(event, timestamp, position, origin, version, metadata, headers)
            for event in events.events
        ),
        events.metadata.expire_after,
    )


def _payload_events(append: Append) -> Events:
    """The append's payload decoded, checked against its header: all that can fail in
    `decode_append` (the rest puts fields together)."""
    header = append.header
    events = decode_events(header.payload_type, append.payload)
    if events.range != header.range:
        raise FormatError(f"events {events.range} do not match the header's range {header.range}")
    return events


def poison_reason(append: Append) -> str | None:
    """Why the replicator would quarantine this append's record for its payload (None: it
    decodes). The read side's fold asks it of every append it folds, so that it quarantines a
    journal exactly where the replicator does (docs/concurrency.md); it decodes the payload as
    `decode_append` does, without making the event records."""
    try:
        _payload_events(append)
    except DECODE_ERRORS as exc:
        return f"payload: {exc}"
    return None
