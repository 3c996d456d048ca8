"""Events as the application sees them, and as a read returns them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from kjournal.errors import EmptyAppend
from kjournal.errors import SeqNrOrderError
from kjournal.model.metadata import PayloadMetadata
from kjournal.model.metadata import RecordMetadata
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.payload import Payload
from kjournal.model.seq_nr import SeqNr
from kjournal.model.seq_nr import SeqRange
from kjournal.model.seq_nr import seq_nr


@dataclass(frozen=True, slots=True)
class Event:
    """One event; a payload is optional."""

    seq_nr: SeqNr
    tags: frozenset[str] = frozenset()
    payload: Payload | None = None

    def __post_init__(self) -> None:
        seq_nr(self.seq_nr)


@dataclass(frozen=True, slots=True)
class Events:
    """The events of one append (one Append record): at least one, seqNrs strictly increasing."""

    events: tuple[Event, ...]
    metadata: PayloadMetadata = field(default_factory=PayloadMetadata)

    def __post_init__(self) -> None:
        if not self.events:
            raise EmptyAppend("an append needs at least one event")
        previous = 0
        for event in self.events:
            if event.seq_nr <= previous:
                raise SeqNrOrderError(
                    f"seqNrs must strictly increase within an append: {event.seq_nr} after {previous}"
                )
            previous = event.seq_nr

    @property
    def range(self) -> SeqRange:
        return SeqRange(self.events[0].seq_nr, self.events[-1].seq_nr)


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event with where and when it was written, as reads return it."""

    event: Event
    timestamp: datetime
    partition_offset: PartitionOffset
    origin: str | None = None
    version: str | None = None
    metadata: RecordMetadata = field(default_factory=RecordMetadata)
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def seq_nr(self) -> SeqNr:
        return self.event.seq_nr
