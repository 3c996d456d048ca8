"""What every service's settings share: the base class reading `KJOURNAL_*` variables, and the
HTTP section of the writer and the reader (`KJOURNAL_HTTP__PORT`, ...).

Each service composes its `Settings` from sections that live beside their components
(`kjournal.kafka.settings`, `kjournal.cassandra.settings`, ...) in its own `settings.py`;
docs/configuration.md lists every variable.
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar
from typing import Literal

from kjournal.api.keys import KeyRules
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings
from pydantic_settings import EnvSettingsSource
from pydantic_settings import PydanticBaseSettingsSource
from pydantic_settings import SettingsConfigDict

from kjournal_service.http_protocol import RequestLimits

__all__ = ["HttpSettings", "ServiceSettings", "invalid_settings"]


def invalid_settings(exc: ValidationError) -> str:
    """What is wrong with the settings, one line per error, naming each setting and never its
    value (pydantic's own message repeats the input, which may hold a password)."""
    lines = []
    for error in exc.errors(include_input=False, include_url=False, include_context=False):
        name = "KJOURNAL_" + "__".join(str(part).upper() for part in error["loc"])
        lines.append(f"  {name}: {error['msg']}")
    return "\n".join(lines)


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
        use_attribute_docstrings=True,
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

    host: str = Field(default="127.0.0.1", description="address to listen on")
    port: int = Field(default=8080, ge=1, le=65535, description="port to listen on")
    topic_prefix: str = Field(
        default="journal", description="only topics starting with this are journal topics"
    )
    max_id_length: int = Field(
        default=1024, ge=1, le=65536, description="longest journal id accepted, in characters"
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="larger request bodies get 413 before they are parsed",
    )
    max_head_bytes: int = Field(
        default=32 * 1024,
        ge=4096,
        description="larger request lines and header fields get 414 or 431 (before parsing)",
    )
    max_header_count: int = Field(
        default=100, ge=8, description="requests with more header fields get 431"
    )
    header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="a request head (or a new connection's first) not complete within this "
        "long gets 408 and the connection closed (slow clients)",
    )
    body_timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="a request body not complete within this long of its head gets 408",
    )
    graceful_shutdown_s: float = Field(
        default=30.0, gt=0, description="on SIGTERM, how long in-flight requests may finish"
    )
    readiness_timeout_s: float = Field(
        default=3.0, gt=0, description="deadline of each /readyz dependency check"
    )
    dependency_check_interval_s: float = Field(
        default=5.0,
        gt=0,
        description="how often dependencies are checked in the background (a line is logged "
        "when one goes down and when it comes back)",
    )
    retry_after_s: int = Field(default=1, ge=0, description="Retry-After of 503 answers")
    stream_chunk_bytes: int = Field(
        default=64 * 1024, ge=1, description="NDJSON lines are sent in chunks of about this size"
    )
    workers: int = Field(
        default=1, ge=1, le=64, description="uvicorn worker processes (each opens its own clients)"
    )
    access_log: bool = Field(default=False, description="log one line per request")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="DEBUG, INFO, WARNING or ERROR"
    )
    log_format: Literal["json", "text"] = Field(
        default="json", description="json (one object per line) or text"
    )

    @property
    def key_rules(self) -> KeyRules:
        return KeyRules(self.topic_prefix, self.max_id_length)

    @property
    def request_limits(self) -> RequestLimits:
        return RequestLimits(
            self.max_head_bytes, self.max_header_count, self.header_timeout_s, self.body_timeout_s
        )
