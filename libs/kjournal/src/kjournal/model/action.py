"""The four actions a journal's Kafka records carry, and their `journal.action` headers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import TypeAlias

from kjournal.model.key import Key
from kjournal.model.metadata import HeaderMetadata
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.payload import PayloadType
from kjournal.model.seq_nr import SeqNr
from kjournal.model.seq_nr import SeqRange

ACTION_HEADER = "journal.action"

TRACE_HEADERS = frozenset({"traceparent", "tracestate"})
"""W3C trace context of the record's produce span (docs/observability.md): infrastructure, never
user headers. Appends refuse them as user headers and reads leave them out, whoever wrote them."""

RESERVED_HEADERS = frozenset({ACTION_HEADER, *TRACE_HEADERS})


@dataclass(frozen=True, slots=True)
class AppendHeader:
    range: SeqRange
    payload_type: PayloadType  # BINARY or JSON: the container of the whole record
    metadata: HeaderMetadata = field(default_factory=HeaderMetadata)
    origin: str | None = None
    version: str | None = None
    # The append's condition (kjournal's own; the Scala library ignores it): None, or the seqNr
    # the journal must have, 0 for "must not exist" (fold/append_rule.py).
    expect: int | None = None


@dataclass(frozen=True, slots=True)
class DeleteHeader:
    to: SeqNr
    origin: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class PurgeHeader:
    origin: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class MarkHeader:
    id: str
    origin: str | None = None
    version: str | None = None


ActionHeader: TypeAlias = AppendHeader | DeleteHeader | PurgeHeader | MarkHeader


@dataclass(frozen=True, slots=True)
class Append:
    """Events appended atomically: `payload` is their encoded container (JSON or binary)."""

    key: Key
    timestamp: datetime
    header: AppendHeader
    payload: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Delete:
    """Logically delete events with seqNr ≤ header.to; never future ones."""

    key: Key
    timestamp: datetime
    header: DeleteHeader


@dataclass(frozen=True, slots=True)
class Purge:
    """Erase the journal; the next append starts a new one."""

    key: Key
    timestamp: datetime
    header: PurgeHeader


@dataclass(frozen=True, slots=True)
class Mark:
    """A barrier with no storage effect."""

    key: Key
    timestamp: datetime
    header: MarkHeader


Action: TypeAlias = Append | Delete | Purge | Mark


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action and where it sits in Kafka."""

    action: Action
    partition_offset: PartitionOffset

    @property
    def offset(self) -> int:
        return self.partition_offset.offset
