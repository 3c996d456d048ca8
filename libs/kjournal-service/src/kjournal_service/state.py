"""The typed state of a service's app.

`ServiceState` is what every service's app holds: its settings, its metrics, the rules of its
keys and, once the lifespan has opened Kafka, the topics' partition counts. A service that holds
more (the clients its lifespan opens) subclasses it. `service_app` attaches the state to the app,
and `<State>.of(app)` is the one way back to it, typed as that class: nothing reads an untyped
`app.state` attribute or casts.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Generic
from typing import Protocol
from typing import TypeVar

from kjournal.api.keys import KeyRules
from kjournal.kafka.topics import TopicPartitions
from starlette.applications import Starlette

from kjournal_service.metrics_prometheus import PrometheusMetrics
from kjournal_service.settings import HttpSettings

__all__ = ["ServiceSettingsLike", "ServiceState"]


class ServiceSettingsLike(Protocol):
    """What the shared code reads of a service's settings: the HTTP section."""

    @property
    def http(self) -> HttpSettings: ...


SettingsT = TypeVar("SettingsT", bound=ServiceSettingsLike)
StateT = TypeVar("StateT", bound="ServiceState[Any]")


@dataclass(eq=False, slots=True)
class ServiceState(Generic[SettingsT]):
    settings: SettingsT
    metrics: PrometheusMetrics = field(default_factory=PrometheusMetrics)
    key_rules: KeyRules = field(init=False)
    # Set by the lifespan once it has opened Kafka (reading it earlier is an AttributeError).
    topics: TopicPartitions = field(init=False)

    def __post_init__(self) -> None:
        self.key_rules = self.settings.http.key_rules

    @property
    def http(self) -> HttpSettings:
        return self.settings.http

    @classmethod
    def of(cls: type[StateT], app: Starlette) -> StateT:
        """The state attached to `app`, which must be a `cls`."""
        state = app.state.kjournal
        if not isinstance(state, cls):
            raise TypeError(f"the app holds a {type(state).__name__}, not a {cls.__name__}")
        return state

    def attach(self, app: Starlette) -> None:
        app.state.kjournal = self
