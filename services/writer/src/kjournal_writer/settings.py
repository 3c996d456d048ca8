"""The writer's settings, from `KJOURNAL_*` environment variables (nested with `__`).

    KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=10.0.0.1:9092
    KJOURNAL_KAFKA__SASL_PASSWORD=...        (a secret: never logged)
    KJOURNAL_HTTP__PORT=8081

The writer has Kafka rights only: there is no Cassandra section, and `KJOURNAL_CASSANDRA__*`
variables are ignored. It learns each append's outcome from the reader (`KJOURNAL_READER__URL`). docs/configuration.md lists every variable.
"""

from __future__ import annotations

from kjournal.kafka.settings import KafkaSettings
from kjournal.writes import HOST_NAME
from kjournal_service.auth import AuthSettings
from kjournal_service.settings import HttpSettings
from kjournal_service.settings import ServiceSettings
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field


class WriterHttpSettings(HttpSettings):
    port: int = Field(default=8081, ge=1, le=65535, description="port to listen on")
    max_events_per_append: int = Field(
        default=10_000, ge=1, description="events one append may hold (more: 400 too-many-events)"
    )
    max_json_depth: int = Field(
        default=128,
        ge=8,
        le=200,
        description="levels of arrays and objects a JSON body may nest (deeper: 400 too-deep, "
        "before it is parsed); at most 200, which every part of the path parses",
    )
    offload_body_bytes: int = Field(
        default=64 * 1024,
        ge=0,
        description="larger append bodies are parsed in a worker thread, not on the event loop",
    )


class ReaderLinkSettings(BaseModel):
    """The reader the writer asks for each append's outcome before it answers
    (docs/concurrency.md): the writer's only way to know the append rule's verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = Field(
        default=None,
        description="the reader service's base URL, e.g. http://kjournal-reader:8080 (required: "
        "the writer does not start without it)",
    )
    timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="how long the writer waits for an append's outcome; beyond it the append is "
        "answered outcome-unknown (504) and a resend of it is safe",
    )


class Settings(ServiceSettings):
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    http: WriterHttpSettings = Field(default_factory=WriterHttpSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    reader: ReaderLinkSettings = Field(default_factory=ReaderLinkSettings)
    origin: str | None = Field(
        default_factory=lambda: HOST_NAME,
        description="written into every action header (the Scala library's origin; default: "
        "the host name)",
    )
