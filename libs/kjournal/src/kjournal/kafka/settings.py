"""The Kafka sections of the settings: how to reach the brokers (shared by the writer, the reader
and the replicator) and the reader's consumer pool (its fold's settings: read/settings.py).

`KafkaSettings` validates itself (credentials and TLS files that the chosen protocol needs) and
translates itself for both clients the project runs: aiokafka (`aiokafka_options`) and the Java
client behind Spark's Kafka source (`java_options`).
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import Any
from typing import Literal
from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import SecretStr
from pydantic import model_validator

__all__ = ["ConsumerPoolSettings", "KafkaSettings"]

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]

_JAAS_LOGIN_MODULES: dict[str, str] = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


class KafkaSettings(BaseModel):
    """How to reach the brokers, as whom, and the producer's durability knobs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap_servers: str = Field(
        default="127.0.0.1:9092", description="comma-separated host:port of brokers"
    )
    client_id: str = Field(default="kjournal", description="client.id of every Kafka client")
    security_protocol: SecurityProtocol = Field(
        default="PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
    )
    sasl_mechanism: SaslMechanism | None = Field(
        default=None, description="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (SASL_* protocols)"
    )
    sasl_username: str | None = Field(default=None, description="SASL principal")
    sasl_password: SecretStr | None = Field(default=None, description="SASL password")
    ssl_cafile: Path | None = Field(
        default=None,
        description="PEM file of the CA(s) that signed the brokers' certificates (SSL, SASL_SSL; "
        "none: the system's CAs)",
    )
    ssl_certfile: Path | None = Field(
        default=None, description="PEM client certificate, for brokers that want one"
    )
    ssl_keyfile: Path | None = Field(default=None, description="PEM private key of ssl_certfile")
    ssl_check_hostname: bool = Field(
        default=True, description="check that a broker's certificate names the host dialled"
    )
    request_timeout_ms: int = Field(
        default=30_000, ge=1_000, description="how long a request to a broker may take"
    )
    # 0: a record goes out as soon as the broker answered the previous request (aiokafka keeps one
    # in flight per broker), so records still batch under load and a lone append waits for nothing.
    linger_ms: int = Field(default=0, ge=0, description="producer linger before sending a batch")
    compression: Literal["lz4", "gzip", "zstd", "none"] = Field(
        default="lz4", description="producer compression"
    )
    # The broker's default message.max.bytes is about 1 MiB; one append is one record.
    max_record_bytes: int = Field(
        default=1_000_000, ge=1_024, description="largest encoded record the writer produces"
    )
    delivery_timeout_ms: int = Field(
        default=15_000,
        ge=1_000,
        description="how long an action may take to be acknowledged; beyond it the writer "
        "answers outcome-unknown (504), and the producer gives it up: it lands within about this "
        "long of being sent or never (a resent append is dropped as a duplicate)",
    )
    metadata_max_age_s: float = Field(
        default=30.0, gt=0, description="how long partition counts are cached"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        """Refuse settings that would connect without what the protocol implies."""
        sasl = self.security_protocol.startswith("SASL_")
        tls = self.security_protocol.endswith("SSL")
        if sasl and self.sasl_mechanism is None:
            raise ValueError(f"security_protocol {self.security_protocol} needs sasl_mechanism")
        if self.sasl_mechanism is not None:
            if not sasl:
                raise ValueError(
                    f"sasl_mechanism is set but security_protocol is {self.security_protocol}: "
                    "use SASL_SSL or SASL_PLAINTEXT"
                )
            if not self.sasl_username or self.sasl_password is None:
                raise ValueError("sasl_mechanism needs sasl_username and sasl_password")
        tls_files = (self.ssl_cafile, self.ssl_certfile, self.ssl_keyfile)
        if not tls and any(path is not None for path in tls_files):
            raise ValueError(
                f"ssl_* files are set but security_protocol is {self.security_protocol}: "
                "use SSL or SASL_SSL"
            )
        if (self.ssl_certfile is None) != (self.ssl_keyfile is None):
            raise ValueError("set both ssl_certfile and ssl_keyfile, or neither")
        return self

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol.endswith("SSL")

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of SSL and SASL_SSL connections (OSError if a file cannot be read)."""
        context = ssl.create_default_context(
            cafile=None if self.ssl_cafile is None else str(self.ssl_cafile)
        )
        context.check_hostname = self.ssl_check_hostname
        if self.ssl_certfile is not None and self.ssl_keyfile is not None:
            context.load_cert_chain(str(self.ssl_certfile), str(self.ssl_keyfile))
        return context

    def aiokafka_options(self) -> dict[str, Any]:
        """Keyword arguments common to aiokafka producers, consumers and admin clients."""
        options: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": self.request_timeout_ms,
        }
        if self.uses_tls:
            options["ssl_context"] = self.ssl_context()
        if self.sasl_mechanism:
            options["sasl_mechanism"] = self.sasl_mechanism
            options["sasl_plain_username"] = self.sasl_username
            options["sasl_plain_password"] = (
                self.sasl_password.get_secret_value() if self.sasl_password else None
            )
        return options

    def java_options(self) -> dict[str, str]:
        """The same connection as Java client properties (Spark's Kafka source prefixes each with
        `kafka.`); the CA file is read as a PEM trust store. No client.id: Spark opens many
        consumers, and a shared id makes each one's JMX registration fail noisily."""
        options: dict[str, str] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
            "request.timeout.ms": str(self.request_timeout_ms),
        }
        if self.sasl_mechanism:
            password = self.sasl_password.get_secret_value() if self.sasl_password else ""
            options["sasl.mechanism"] = self.sasl_mechanism
            options["sasl.jaas.config"] = (
                f"{_JAAS_LOGIN_MODULES[self.sasl_mechanism]} required "
                f"username={_jaas_quoted(self.sasl_username or '')} "
                f"password={_jaas_quoted(password)};"
            )
        if self.uses_tls:
            if self.ssl_cafile is not None:
                options["ssl.truststore.type"] = "PEM"
                options["ssl.truststore.location"] = str(self.ssl_cafile)
            if not self.ssl_check_hostname:
                options["ssl.endpoint.identification.algorithm"] = ""
        return options


def _jaas_quoted(value: str) -> str:
    """A JAAS option value: double-quoted, with `\\` and `"` escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


class ConsumerPoolSettings(BaseModel):
    """Consumers that read a journal's unreplicated tail on demand (assign + seek, no group)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_size: int = Field(
        default_factory=lambda: max(1, (os.cpu_count() or 1) * 10),
        ge=1,
        description="consumers open at most (default: 10 per CPU)",
    )
    idle_timeout_s: float = Field(
        default=60.0, gt=0, description="an idle consumer is closed after this long"
    )
    acquire_timeout_s: float = Field(
        default=60.0, gt=0, description="how long a read waits for a free consumer"
    )
    poll_timeout_ms: int = Field(default=10, ge=0, description="wait per poll of a tail scan")
    # upper bound of records materialized per poll (the scan also keeps each poll near 1 MiB)
    max_poll_records: int = Field(default=500, ge=1, description="records per poll at most")
    scan_payload_budget_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description="payload bytes one tail scan keeps in memory before it streams the rest again",
    )
