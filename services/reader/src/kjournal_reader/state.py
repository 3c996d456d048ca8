"""The reader's app state: its settings and metrics (`ServiceState`), the stream slots, and what
its lifespan opens (the Cassandra connection, the eventual store's reader, the read side);
`ReaderState.of(app)` is the one way to it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from kjournal.cassandra.connection import CassandraConnection
from kjournal.ports import EventualReader
from kjournal.reads import ReadableJournal
from kjournal.reads import ReadSide
from kjournal_service.state import ServiceState

from kjournal_reader.settings import Settings
from kjournal_reader.stream_slots import StreamSlots

__all__ = ["ReaderState"]


@dataclass(eq=False, slots=True)
class ReaderState(ServiceState[Settings]):
    stream_slots: StreamSlots = field(init=False)
    # Set by the lifespan (reading one earlier is an AttributeError).
    cassandra: CassandraConnection = field(init=False)
    eventual: EventualReader = field(init=False)
    reads: ReadSide = field(init=False)

    def __post_init__(self) -> None:
        ServiceState.__post_init__(self)
        self.stream_slots = StreamSlots(self.settings.http.max_concurrent_streams, self.metrics)

    def journal(self, topic: str, id: str) -> ReadableJournal:
        """The journal a URL's topic and id name (InvalidKey if they cannot name one)."""
        return self.reads.journal(self.key_rules.key(topic, id))
