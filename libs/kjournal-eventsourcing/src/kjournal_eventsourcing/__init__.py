"""kjournal as a persistence module of the `eventsourcing` library: set
`PERSISTENCE_MODULE=kjournal_eventsourcing` and the application's events go to kjournal through
its writer and reader (docs/eventsourcing.md).

Settings, from the application's environment (each also read with the application's name as a
prefix, as the library's other modules do, e.g. `BANKACCOUNTS_KJOURNAL_TOPIC`):

* `KJOURNAL_WRITER_URL`, `KJOURNAL_READER_URL`: the services (default http://127.0.0.1:8081 and
  :8082, those of `scripts/dev up`), as for the `kjournal` command;
* `KJOURNAL_TOKEN`: a bearer token, for services with authentication on;
* `KJOURNAL_TOPIC`: the journal topic of the aggregates' events (default `journal`); the
  application recorder's must have one partition;
* `KJOURNAL_SNAPSHOTS_TOPIC`: the topic of the snapshots (default `<topic>_snapshots`);
* `KJOURNAL_TIMEOUT_S`: seconds per request (default 30), and as long again for resending an
  append whose outcome is unknown.
"""

from __future__ import annotations

from typing import Any
from typing import TypeVar

from eventsourcing.persistence import AggregateRecorder
from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.persistence import InfrastructureFactory
from eventsourcing.persistence import InfrastructureFactoryError
from eventsourcing.persistence import ProcessRecorder
from eventsourcing.persistence import TrackingRecorder
from eventsourcing.utils import Environment
from eventsourcing.utils import EnvType

from kjournal_eventsourcing.application import KJournalApplicationRecorder
from kjournal_eventsourcing.application import KJournalSubscription
from kjournal_eventsourcing.recorders import KJournalAggregateRecorder

__all__ = [
    "Factory",
    "KJournalAggregateRecorder",
    "KJournalApplicationRecorder",
    "KJournalSubscription",
]

R = TypeVar("R", bound=KJournalAggregateRecorder)

DEFAULT_WRITER_URL = "http://127.0.0.1:8081"
DEFAULT_READER_URL = "http://127.0.0.1:8082"
DEFAULT_TOPIC = "journal"

_NO_TRACKING = (
    "kjournal cannot record a tracking position atomically with the events it tracks (Kafka has "
    "no transaction across journals that kjournal uses): keep the projection's view and its "
    "tracking records in a module that can, such as eventsourcing.sqlite or "
    "eventsourcing.postgres"
)


class Factory(InfrastructureFactory[TrackingRecorder]):
    """Makes kjournal recorders; `close()` (the application's) closes their HTTP clients."""

    WRITER_URL = "KJOURNAL_WRITER_URL"
    READER_URL = "KJOURNAL_READER_URL"
    TOKEN = "KJOURNAL_TOKEN"
    JOURNAL_TOPIC = "KJOURNAL_TOPIC"  # not TOPIC: the library reads a class's TOPIC as its topic
    SNAPSHOTS_TOPIC = "KJOURNAL_SNAPSHOTS_TOPIC"
    TIMEOUT_S = "KJOURNAL_TIMEOUT_S"

    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        self._recorders: list[KJournalAggregateRecorder] = []

    def close(self) -> None:
        for recorder in self._recorders:
            recorder.close()
        self._recorders.clear()
        super().close()

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        if purpose == "events":
            topic = self._topic()
        elif purpose == "snapshots":
            topic = self.env.get(self.SNAPSHOTS_TOPIC) or f"{self._topic()}_snapshots"
        else:
            raise InfrastructureFactoryError(f"no kjournal topic for recorder purpose {purpose!r}")
        return self._made(KJournalAggregateRecorder(topic, *self._services(), **self._options()))

    def application_recorder(self) -> ApplicationRecorder:
        """On KJOURNAL_TOPIC, which must have one partition (InfrastructureFactoryError)."""
        return self._made(
            KJournalApplicationRecorder(self._topic(), *self._services(), **self._options())
        )

    def tracking_recorder(
        self, tracking_recorder_class: type[TrackingRecorder] | None = None
    ) -> TrackingRecorder:
        raise NotImplementedError(_NO_TRACKING)

    def process_recorder(self) -> ProcessRecorder:
        raise NotImplementedError(_NO_TRACKING)

    def _made(self, recorder: R) -> R:
        self._recorders.append(recorder)
        return recorder

    def _services(self) -> tuple[str, str]:
        return (
            self.env.get(self.WRITER_URL) or DEFAULT_WRITER_URL,
            self.env.get(self.READER_URL) or DEFAULT_READER_URL,
        )

    def _options(self) -> dict[str, Any]:
        timeout_s = self._timeout_s()
        return {
            "token": self.env.get(self.TOKEN) or None,
            "timeout_s": timeout_s,
            "retry_budget_s": timeout_s,
        }

    def _topic(self) -> str:
        return self.env.get(self.JOURNAL_TOPIC) or DEFAULT_TOPIC

    def _timeout_s(self) -> float:
        value = self.env.get(self.TIMEOUT_S) or "30"
        try:
            timeout_s = float(value)
        except ValueError:
            timeout_s = -1.0
        if timeout_s <= 0:
            raise InfrastructureFactoryError(
                f"{self.TIMEOUT_S} must be a positive number of seconds, not {value!r}"
            )
        return timeout_s
