"""What the services' settings share: the base class reading `KJOURNAL_*` variables, and the
HTTP section (`KJOURNAL_HTTP__PORT`, ...)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from kjournal.api.keys import KeyRules
from kjournal.kafka.settings import KafkaSettings

__all__ = ["HttpSettings", "ServiceSettings", "check_kafka_credentials"]


class _PlainOrJsonEnv(EnvSettingsSource):
    """Complex values may be JSON or plain text: `KJOURNAL_CASSANDRA__CONTACT_POINTS=10.0.0.1,
    10.0.0.2` reaches the field's own validator as a string instead of failing as bad JSON."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            return value


class ServiceSettings(BaseSettings):
    """Base of each service's settings: `KJOURNAL_` prefix, sections nested with `__`."""

    model_config: ClassVar[SettingsConfigDict] = SettingsConfigDict(
        env_prefix="KJOURNAL_",
        env_nested_delimiter="__",
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _PlainOrJsonEnv(settings_cls), dotenv_settings, file_secret_settings)


class HttpSettings(BaseModel):
    """How a service listens and what requests it accepts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    topic_prefix: str = Field(
        default="journal", description="only topics starting with this are journal topics"
    )
    max_id_length: int = Field(default=1024, ge=1, le=65536)
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="larger request bodies get 413 before they are parsed",
    )
    graceful_shutdown_s: float = Field(
        default=30.0, gt=0, description="on SIGTERM, how long in-flight requests may finish"
    )
    readiness_timeout_s: float = Field(default=3.0, gt=0)
    retry_after_s: int = Field(default=1, ge=0, description="Retry-After of 503 answers")
    stream_chunk_bytes: int = Field(
        default=64 * 1024, ge=1, description="NDJSON lines are sent in chunks of about this size"
    )
    workers: int = Field(
        default=1, ge=1, le=64, description="uvicorn worker processes (each opens its own clients)"
    )
    access_log: bool = False
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "text"] = "json"

    @property
    def key_rules(self) -> KeyRules:
        return KeyRules(self.topic_prefix, self.max_id_length)


def check_kafka_credentials(kafka: KafkaSettings) -> None:
    """Refuse Kafka settings that would connect without the credentials they imply."""
    sasl = kafka.security_protocol.startswith("SASL_")
    if sasl and kafka.sasl_mechanism is None:
        raise ValueError(f"kafka.security_protocol {kafka.security_protocol} needs sasl_mechanism")
    if kafka.sasl_mechanism is not None:
        if not sasl:
            raise ValueError(
                "kafka.sasl_mechanism is set but security_protocol is "
                f"{kafka.security_protocol}: use SASL_SSL or SASL_PLAINTEXT"
            )
        if not kafka.sasl_username or kafka.sasl_password is None:
            raise ValueError("kafka.sasl_mechanism needs sasl_username and sasl_password")
