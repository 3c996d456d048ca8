"""Settings of the local platform, read from `KJOURNAL_DEV_*` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev.errors import DevError

KAFKA_VERSION = "4.3.1"
CASSANDRA_VERSION = "5.0.8"
LOG4J_VERSION = "2.25.2"
DEFAULT_SPARK_VERSION = "4.0.0"


def find_repo_root(start: Path | None = None) -> Path:
    """The workspace root: the nearest parent holding both pyproject.toml and infra/local."""
    here = (start or Path(__file__)).resolve()
    for candidate in [here, *here.parents]:
        if (candidate / "pyproject.toml").is_file() and (candidate / "infra" / "local").is_dir():
            return candidate
    return Path.cwd()


def _int_env(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise DevError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise DevError(f"{name}={raw!r} must be positive")
    return value


def _path_env(env: dict[str, str], name: str, default: Path) -> Path:
    raw = env.get(name, "").strip()
    return Path(raw).expanduser().resolve() if raw else default


@dataclass(frozen=True)
class DevConfig:
    """Where things live and which ports they use; every field has a `KJOURNAL_DEV_*` variable."""

    cache_dir: Path
    state_dir: Path
    maven_local_repo: Path
    maven_repo_url: str | None = None
    java: str | None = None
    host: str = "127.0.0.1"
    kafka_port: int = 9092
    kafka_controller_port: int = 9093
    cassandra_port: int = 9042
    cassandra_storage_port: int = 7000
    kafka_heap_mb: int = 512
    cassandra_heap_mb: int = 1024
    topics: tuple[str, ...] = ("journal",)
    partitions: int = 8
    keyspace: str = "journal"
    kafka_timeout_s: int = 90
    cassandra_timeout_s: int = 180
    spark_version: str = DEFAULT_SPARK_VERSION
    writer_port: int = 8081
    replicator_port: int = 9400
    reader_port: int = 8082
    service_timeout_s: int = 60

    @property
    def kafka_bootstrap(self) -> str:
        return f"{self.host}:{self.kafka_port}"

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def jars_dir(self) -> Path:
        return self.cache_dir / "jars"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> DevConfig:
        env = dict(os.environ if env is None else env)
        root = find_repo_root()
        cache = _path_env(env, "KJOURNAL_DEV_CACHE", root / ".cache")
        topics = tuple(
            t.strip() for t in env.get("KJOURNAL_DEV_TOPICS", "journal").split(",") if t.strip()
        )
        return cls(
            cache_dir=cache,
            state_dir=_path_env(env, "KJOURNAL_DEV_STATE_DIR", cache / "dev"),
            maven_local_repo=_path_env(env, "KJOURNAL_DEV_MAVEN_LOCAL_REPO", cache / "m2"),
            maven_repo_url=env.get("KJOURNAL_DEV_MAVEN_REPO") or None,
            java=env.get("KJOURNAL_DEV_JAVA") or None,
            kafka_port=_int_env(env, "KJOURNAL_DEV_KAFKA_PORT", 9092),
            kafka_controller_port=_int_env(env, "KJOURNAL_DEV_KAFKA_CONTROLLER_PORT", 9093),
            cassandra_port=_int_env(env, "KJOURNAL_DEV_CASSANDRA_PORT", 9042),
            cassandra_storage_port=_int_env(env, "KJOURNAL_DEV_CASSANDRA_STORAGE_PORT", 7000),
            kafka_heap_mb=_int_env(env, "KJOURNAL_DEV_KAFKA_HEAP_MB", 512),
            cassandra_heap_mb=_int_env(env, "KJOURNAL_DEV_CASSANDRA_HEAP_MB", 1024),
            topics=topics or ("journal",),
            partitions=_int_env(env, "KJOURNAL_DEV_PARTITIONS", 8),
            keyspace=env.get("KJOURNAL_DEV_KEYSPACE", "journal") or "journal",
            kafka_timeout_s=_int_env(env, "KJOURNAL_DEV_KAFKA_TIMEOUT", 90),
            cassandra_timeout_s=_int_env(env, "KJOURNAL_DEV_CASSANDRA_TIMEOUT", 180),
            spark_version=env.get("KJOURNAL_DEV_SPARK_VERSION") or _installed_pyspark_version(),
            writer_port=_int_env(env, "KJOURNAL_DEV_WRITER_PORT", 8081),
            replicator_port=_int_env(env, "KJOURNAL_DEV_REPLICATOR_PORT", 9400),
            reader_port=_int_env(env, "KJOURNAL_DEV_READER_PORT", 8082),
            service_timeout_s=_int_env(env, "KJOURNAL_DEV_SERVICE_TIMEOUT", 60),
        )


def _installed_pyspark_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        return DEFAULT_SPARK_VERSION
