"""The writer's app state: its settings and metrics (`ServiceState`) and the write side its
lifespan opens; `WriterState.of(app)` is the one way to it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from kjournal.writes import WritableJournal
from kjournal.writes import WriteSide
from kjournal_service.state import ServiceState

from kjournal_writer.settings import Settings

__all__ = ["WriterState"]


@dataclass(eq=False, slots=True)
class WriterState(ServiceState[Settings]):
    # A Kafka producer, set by the lifespan (reading it earlier is an AttributeError).
    writes: WriteSide = field(init=False)

    def journal(self, topic: str, id: str) -> WritableJournal:
        """The journal a URL's topic and id name (InvalidKey if they cannot name one)."""
        return self.writes.journal(self.key_rules.key(topic, id))
