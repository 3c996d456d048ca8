"""The writer's settings, from `KJOURNAL_*` environment variables (nested with `__`).

    KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=10.0.0.1:9092
    KJOURNAL_KAFKA__SASL_PASSWORD=...        (a secret: never logged)
    KJOURNAL_HTTP__PORT=8081

The writer has Kafka rights only: there is no Cassandra section, and `KJOURNAL_CASSANDRA__*`
variables are ignored.
"""

from __future__ import annotations

import socket
from typing import Self

from kjournal.api.settings import HttpSettings, ServiceSettings, check_kafka_credentials
from kjournal.kafka.settings import KafkaSettings
from pydantic import Field, model_validator


class WriterHttpSettings(HttpSettings):
    port: int = Field(default=8081, ge=1, le=65535)


class Settings(ServiceSettings):
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    http: WriterHttpSettings = Field(default_factory=WriterHttpSettings)
    origin: str | None = Field(
        default_factory=socket.gethostname,
        description="written into every action header (the Scala library's origin)",
    )

    @model_validator(mode="after")
    def _safe(self) -> Self:
        check_kafka_credentials(self.kafka)
        return self
