"""The reader's settings, from `KJOURNAL_*` environment variables (nested with `__`).

KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=10.0.0.1:9092
KJOURNAL_CASSANDRA__CONTACT_POINTS=10.0.0.2,10.0.0.3
KJOURNAL_CASSANDRA__PASSWORD=...          (a secret: never logged)
KJOURNAL_HEAD_CACHE__PAYLOAD_BUDGET_BYTES=67108864
KJOURNAL_HTTP__PORT=8082
"""

from __future__ import annotations

from typing import Self

from kjournal.api.settings import HttpSettings, ServiceSettings, check_kafka_credentials
from kjournal.kafka.settings import ConsumerPoolSettings, HeadCacheSettings, KafkaSettings
from kjournal.settings import CassandraSettings
from pydantic import Field, model_validator


class ReaderHttpSettings(HttpSettings):
    port: int = Field(default=8082, ge=1, le=65535)


class Settings(ServiceSettings):
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
    consumer_pool: ConsumerPoolSettings = Field(default_factory=ConsumerPoolSettings)
    head_cache: HeadCacheSettings = Field(default_factory=HeadCacheSettings)
    http: ReaderHttpSettings = Field(default_factory=ReaderHttpSettings)
    scan_payload_budget_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description="payload bytes one Kafka scan keeps before it streams the rest again",
    )
    cassandra_retry_max_s: float = Field(
        default=10.0, gt=0, description="longest pause between attempts to reach Cassandra"
    )

    @model_validator(mode="after")
    def _safe(self) -> Self:
        check_kafka_credentials(self.kafka)
        return self
