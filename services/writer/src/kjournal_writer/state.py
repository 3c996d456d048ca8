"""The writer's app state: its settings and metrics (`ServiceState`) and the `Journals` its
lifespan opens; `WriterState.of(app)` is the one way to it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kjournal.journal import Journal, Journals
from kjournal_service.state import ServiceState

from kjournal_writer.settings import Settings

__all__ = ["WriterState"]


@dataclass(eq=False, slots=True)
class WriterState(ServiceState[Settings]):
    # Write-only (a Kafka producer), set by the lifespan (reading it earlier is an AttributeError).
    journals: Journals = field(init=False)

    def journal(self, topic: str, id: str) -> Journal:
        """The journal a URL's topic and id name (InvalidKey if they cannot name one)."""
        return self.journals.journal(self.key_rules.key(topic, id))
