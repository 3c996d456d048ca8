"""The reader's settings, from `KJOURNAL_*` environment variables (nested with `__`).

    KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=10.0.0.1:9092
    KJOURNAL_CASSANDRA__CONTACT_POINTS=10.0.0.2,10.0.0.3
    KJOURNAL_CASSANDRA__PASSWORD=...          (a secret: never logged)
    KJOURNAL_FOLD__PAYLOAD_BUDGET_BYTES=67108864
    KJOURNAL_HTTP__PORT=8082

docs/configuration.md lists every variable.
"""

from __future__ import annotations

from kjournal.cassandra.settings import CassandraSettings
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.read.settings import FoldSettings
from kjournal_service.auth import AuthSettings
from kjournal_service.settings import HttpSettings
from kjournal_service.settings import ServiceSettings
from pydantic import Field


class ReaderHttpSettings(HttpSettings):
    port: int = Field(default=8082, ge=1, le=65535, description="port to listen on")
    max_concurrent_streams: int = Field(
        default=128,
        ge=1,
        description="streamed reads (events, journal ids) served at once by one process; one "
        "more gets 503 busy with Retry-After",
    )


class Settings(ServiceSettings):
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
    consumer_pool: ConsumerPoolSettings = Field(default_factory=ConsumerPoolSettings)
    fold: FoldSettings = Field(default_factory=FoldSettings)
    http: ReaderHttpSettings = Field(default_factory=ReaderHttpSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    cassandra_retry_max_s: float = Field(
        default=10.0, gt=0, description="longest pause between attempts to reach Cassandra"
    )
