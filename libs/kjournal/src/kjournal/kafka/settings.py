"""Kafka connection and client settings, shared by the writer, the reader and the replicator."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr


class KafkaSettings(BaseModel):
    """How to reach the brokers, and the producer's durability knobs."""

    bootstrap_servers: str = "127.0.0.1:9092"
    client_id: str = "kjournal"
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    request_timeout_ms: int = Field(default=30_000, ge=1_000)
    # 0: a record goes out as soon as the broker answered the previous request (aiokafka keeps one
    # in flight per broker), so records still batch under load and a lone append waits for nothing.
    linger_ms: int = Field(default=0, ge=0)
    compression: Literal["lz4", "gzip", "zstd", "none"] = "lz4"
    # The broker's default message.max.bytes is about 1 MiB; one append is one record.
    max_record_bytes: int = Field(default=1_000_000, ge=1_024)
    metadata_max_age_s: float = Field(default=30.0, gt=0)

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments common to aiokafka producers, consumers and admin clients."""
        options: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": self.request_timeout_ms,
        }
        if self.sasl_mechanism:
            options["sasl_mechanism"] = self.sasl_mechanism
            options["sasl_plain_username"] = self.sasl_username
            options["sasl_plain_password"] = (
                self.sasl_password.get_secret_value() if self.sasl_password else None
            )
        return options


class ConsumerPoolSettings(BaseModel):
    """Consumers that read the unreplicated head on demand (assign + seek, no group)."""

    max_size: int = Field(default_factory=lambda: max(1, (os.cpu_count() or 1) * 10), ge=1)
    idle_timeout_s: float = Field(default=60.0, gt=0)
    acquire_timeout_s: float = Field(default=60.0, gt=0)
    poll_timeout_ms: int = Field(default=10, ge=0)
    # upper bound of records materialized per poll (the scan also keeps each poll near 1 MiB)
    max_poll_records: int = Field(default=500, ge=1)


class HeadCacheSettings(BaseModel):
    """The per-process tail of each journal topic (keys and headers, plus a payload budget)."""

    enabled: bool = True
    payload_budget_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    max_journals_per_partition: int = Field(default=10_000, ge=1)
    wait_timeout_s: float = Field(default=1.0, ge=0)
    pointer_poll_interval_s: float = Field(default=0.1, gt=0)
    idle_expiry_s: float = Field(default=600.0, gt=0)
