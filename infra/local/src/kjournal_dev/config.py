"""Settings of the local platform tool, from `KJOURNAL_DEV_*` environment variables.

A pydantic model like the services' settings (docs/configuration.md lists both), validated from
the environment by `DevConfig.from_env`; a bad value is one `DevError` line naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import ValidationError
from pydantic import field_validator
from pydantic import model_validator

from kjournal_dev import build_cache
from kjournal_dev.errors import DevError

KAFKA_VERSION = "4.3.1"
CASSANDRA_VERSION = "5.0.8"
LOG4J_VERSION = "2.25.2"
DEFAULT_SPARK_VERSION = "4.0.0"

ENV_PREFIX = "KJOURNAL_DEV_"


def find_repo_root(start: Path | None = None) -> Path:
    """The workspace root: the nearest parent holding both pyproject.toml and infra/local."""
    here = (start or Path(__file__)).resolve()
    for candidate in [here, *here.parents]:
        if (candidate / "pyproject.toml").is_file() and (candidate / "infra" / "local").is_dir():
            return candidate
    return Path.cwd()


def _installed_pyspark_version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        return DEFAULT_SPARK_VERSION


def _comma_separated(value: object) -> object:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def _port(default: int, what: str) -> Any:
    return Field(default=default, ge=1, le=65535, description=what)


class DevConfig(BaseModel):
    """Where things live and which ports they use; every field is a `KJOURNAL_DEV_*` variable
    (its alias)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    cache_dir: Path = Field(
        alias="KJOURNAL_DEV_CACHE",
        description="one folder for this checkout's state and, unless KJOURNAL_DEV_BUILD_CACHE is "
        "set, the build cache too (default: <repo>/.cache, holding the state only)",
    )
    build_cache_dir: Path = Field(
        alias="KJOURNAL_DEV_BUILD_CACHE",
        description="the per-machine build cache every checkout shares: jars, the local Maven "
        "repository, the collector, the kind toolchain, Go's caches, Docker's data root (default: "
        "$KJOURNAL_DEV_CACHE if set, else $XDG_CACHE_HOME/kjournal, else ~/.cache/kjournal)",
    )
    state_dir: Path = Field(
        alias="KJOURNAL_DEV_STATE_DIR",
        description="this checkout's running platform: PIDs, ports, logs, credentials, data "
        "(default: <cache>/dev)",
    )
    maven_local_repo: Path = Field(
        alias="KJOURNAL_DEV_MAVEN_LOCAL_REPO",
        description="Maven's local repository (default: <build cache>/m2)",
    )
    maven_repo_url: str | None = Field(
        default=None,
        alias="KJOURNAL_DEV_MAVEN_REPO",
        description="a Maven repository to fetch from instead of Maven Central",
    )
    java: str | None = Field(
        default=None,
        alias="KJOURNAL_DEV_JAVA",
        description="the Java 17 to run Kafka and Cassandra (default: $JAVA_HOME, else PATH)",
    )
    host: str = Field(
        default="127.0.0.1", alias="KJOURNAL_DEV_HOST", description="loopback address"
    )
    kafka_port: int = _port(9092, "Kafka broker port")
    kafka_controller_port: int = _port(9093, "Kafka controller port")
    kafka_tls_port: int = _port(9094, "Kafka SASL_SSL port (the secured platform's TLS listener)")
    cassandra_port: int = _port(9042, "Cassandra CQL port")
    cassandra_storage_port: int = _port(7000, "Cassandra storage port")
    kafka_heap_mb: int = Field(default=512, ge=64, description="Kafka JVM heap, MiB")
    cassandra_heap_mb: int = Field(default=1024, ge=256, description="Cassandra JVM heap, MiB")
    topics: tuple[str, ...] = Field(
        default=("journal",), description="comma-separated topics `up` creates"
    )
    partitions: int = Field(default=8, ge=1, description="partitions of the topics `up` creates")
    application_topics: tuple[str, ...] = Field(
        default=(),
        description="comma-separated application topics `up` creates with one partition, each "
        "with its `<name>_snapshots` sibling (docs/eventsourcing.md); journal topics too",
    )
    keyspace: str = Field(default="journal", description="keyspace that receives the schema")
    kafka_timeout_s: int = Field(
        default=90, ge=1, alias="KJOURNAL_DEV_KAFKA_TIMEOUT", description="seconds Kafka may take"
    )
    cassandra_timeout_s: int = Field(
        default=180,
        ge=1,
        alias="KJOURNAL_DEV_CASSANDRA_TIMEOUT",
        description="seconds Cassandra may take to answer",
    )
    spark_version: str = Field(
        default_factory=_installed_pyspark_version,
        description="Spark version whose Kafka source jars are fetched (default: pyspark's)",
    )
    writer_port: int = _port(8081, "writer service port")
    reader_port: int = _port(8082, "reader service port")
    replicator_port: int = _port(9400, "replicator's health and metrics port")
    collector: bool = Field(
        default=True,
        description="start an OpenTelemetry Collector (built once from Go modules) that receives "
        "the services' spans; false: no collector, and the services trace nothing unless "
        "OTEL_EXPORTER_OTLP_ENDPOINT names another",
    )
    otlp_grpc_port: int = _port(4317, "OpenTelemetry Collector's OTLP/gRPC port")
    otlp_http_port: int = _port(4318, "OpenTelemetry Collector's OTLP/HTTP port (the services')")
    service_timeout_s: int = Field(
        default=60,
        ge=1,
        alias="KJOURNAL_DEV_SERVICE_TIMEOUT",
        description="seconds a service may take to become ready",
    )
    secure: bool = Field(
        default=False,
        description="run Kafka with SCRAM users and ACLs, Cassandra with roles and grants, and "
        "the services with HTTP authentication (`up --secure`; credentials in "
        "<state>/credentials.json, mode 0600)",
    )
    auth: bool = Field(
        default=False,
        description="start the writer and reader with bearer-token authentication, trusting "
        "the dev issuer in <state>/auth (tokens: `kjournal-dev token`)",
    )

    @field_validator("topics", mode="before")
    @classmethod
    def _split_topics(cls, value: object) -> object:
        return _comma_separated(value) or ("journal",)

    @field_validator("application_topics", mode="before")
    @classmethod
    def _split_application_topics(cls, value: object) -> object:
        return _comma_separated(value)

    @property
    def snapshot_topics(self) -> tuple[str, ...]:
        return tuple(f"{topic}_snapshots" for topic in self.application_topics)

    @property
    def journal_topics(self) -> tuple[str, ...]:
        """Every topic `up` creates: the services and the replicator take them all."""
        return (*self.topics, *self.snapshot_topics, *self.application_topics)

    @field_validator("cache_dir", "build_cache_dir", "state_dir", "maven_local_repo")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @model_validator(mode="before")
    @classmethod
    def _paths_under_the_caches(cls, values: Any) -> Any:
        if isinstance(values, dict):
            given = values.get("cache_dir")
            cache = Path(given or find_repo_root() / ".cache")
            # A KJOURNAL_DEV_CACHE set by hand keeps meaning what it always did: everything there.
            build = build_cache.default_location(os.environ) if given is None else cache
            values = {"cache_dir": cache, "build_cache_dir": build, **values}
            values.setdefault("state_dir", cache / "dev")
            values.setdefault("maven_local_repo", Path(values["build_cache_dir"]) / "m2")
        return values

    @property
    def kafka_bootstrap(self) -> str:
        return f"{self.host}:{self.kafka_port}"

    @property
    def otlp_endpoint(self) -> str:
        """Where the services send spans: the local collector's OTLP/HTTP address."""
        return f"http://{self.host}:{self.otlp_http_port}"

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def kafka_tls_bootstrap(self) -> str:
        return f"{self.host}:{self.kafka_tls_port}"

    @property
    def tls_dir(self) -> Path:
        """The secured platform's loopback CA and broker certificate."""
        return self.state_dir / "tls"

    @property
    def credentials_file(self) -> Path:
        """The secured platform's generated passwords (mode 0600)."""
        return self.state_dir / "credentials.json"

    @property
    def auth_dir(self) -> Path:
        """The dev token issuer's key and JWKS."""
        return self.state_dir / "auth"

    @property
    def jars_dir(self) -> Path:
        return self.build_cache_dir / "jars"

    @classmethod
    def env_name(cls, field: str) -> str:
        """The variable that sets `field`."""
        alias = cls.model_fields[field].alias
        return alias or ENV_PREFIX + field.upper()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DevConfig:
        """The settings from `env` (default: the process environment); empty values are unset."""
        env = os.environ if env is None else env
        values = {
            field: env[name]
            for field in cls.model_fields
            if (name := cls.env_name(field)) in env and env[name].strip()
        }
        if "cache_dir" not in values and "build_cache_dir" not in values:
            values["build_cache_dir"] = str(build_cache.default_location(env))
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0]) if error["loc"] else ""
            name = cls.env_name(field) if field in cls.model_fields else field
            raise DevError(f"{name}={values.get(field)!r}: {error['msg']}") from None
