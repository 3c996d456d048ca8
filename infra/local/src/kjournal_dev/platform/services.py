"""kjournal's own services on loopback: the writer and the reader (uvicorn processes) and the
replicator (a Spark driver in local mode).

`SERVICES` is the list `up` starts (in order, after Kafka, Cassandra and the schema) and `down`
stops; a new service is one more `ServiceSpec`. Each runs this workspace's Python
(`python -m <module>`), is configured through its `KJOURNAL_*` variables, logs into the run's
data directory and counts as up once `GET <url>/readyz` answers 200.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev.artifacts.maven import spark_kafka_bundle
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.platform.state import ComponentState
from kjournal_dev.process import spawn
from kjournal_dev.security import cassandra as cassandra_security
from kjournal_dev.security import kafka as kafka_security
from kjournal_dev.security.credentials import CASSANDRA_READER
from kjournal_dev.security.credentials import CASSANDRA_REPLICATOR
from kjournal_dev.security.credentials import KAFKA_READER
from kjournal_dev.security.credentials import KAFKA_REPLICATOR
from kjournal_dev.security.credentials import KAFKA_WRITER
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.tokens import DevIssuer

__all__ = [
    "SERVICES",
    "ServiceSpec",
    "cassandra_env",
    "credentials_env",
    "is_ready",
    "probe",
    "replicator_env",
    "spec_named",
    "start",
    "tracing_env",
]


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    module: str  # run as `python -m <module>`; also the PID-reuse marker
    port_of: Callable[[DevConfig], int]
    port_variable: str  # the KJOURNAL_DEV_* variable that sets the port
    # the service's own KJOURNAL_* settings, given the config and the service's home directory
    env_of: Callable[[DevConfig, Path], dict[str, str]]
    health_path: str = "/readyz"
    min_start_timeout_s: int = 0  # Spark takes longer to start than uvicorn

    def url(self, config: DevConfig) -> str:
        return f"http://{config.host}:{self.port_of(config)}"


def tracing_env(config: DevConfig) -> dict[str, str]:
    """The OTEL_* variables of a service: spans to the local collector; without one, none
    (unless OTEL_EXPORTER_OTLP_ENDPOINT names another collector)."""
    if config.collector:
        # Spans reach the collector within half a second (the SDK's default batches for 5 s),
        # and every trace is sampled (the chart samples 1 %), so that `trace` finds any one.
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": config.otlp_endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "500",
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
        }
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return {}
    return {"OTEL_SDK_DISABLED": "true"}


def _common_env(config: DevConfig) -> dict[str, str]:
    return {
        **tracing_env(config),
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": config.kafka_bootstrap,
        "KJOURNAL_HTTP__HOST": config.host,
        # Every topic `up` creates must be a journal topic for the services.
        "KJOURNAL_HTTP__TOPIC_PREFIX": common_prefix(config.journal_topics),
        "KJOURNAL_HTTP__LOG_FORMAT": "text",
    }


def common_prefix(names: tuple[str, ...]) -> str:
    prefix = names[0] if names else ""
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


def _auth_env(config: DevConfig) -> dict[str, str]:
    if not (config.auth or config.secure):
        return {}
    return DevIssuer(config.auth_dir).ensure().service_env()


def credentials_env(
    config: DevConfig, kafka_principal: str, cassandra_role: str | None
) -> dict[str, str]:
    """The secured platform's credentials of one service (none when not secured)."""
    if not config.secure:
        return {}
    credentials = Credentials.load(config.credentials_file)
    if credentials is None:
        raise DevError(f"the secured platform has no {config.credentials_file}")
    env = kafka_security.client_env(kafka_principal, credentials)
    if cassandra_role is not None:
        env.update(cassandra_security.client_env(cassandra_role, credentials))
    return env


def _writer_env(config: DevConfig, home: Path) -> dict[str, str]:
    return {
        **_common_env(config),
        "KJOURNAL_HTTP__PORT": str(config.writer_port),
        "KJOURNAL_READER__URL": f"http://{config.host}:{config.reader_port}",
        **_auth_env(config),
        **credentials_env(config, KAFKA_WRITER, None),
    }


def cassandra_env(config: DevConfig) -> dict[str, str]:
    return {
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": config.host,
        "KJOURNAL_CASSANDRA__PORT": str(config.cassandra_port),
        "KJOURNAL_CASSANDRA__KEYSPACE": config.keyspace,
    }


def replicator_env(config: DevConfig, home: Path) -> dict[str, str]:
    topics = "|".join(re.escape(topic) for topic in config.journal_topics)
    return {
        **tracing_env(config),
        **cassandra_env(config),
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": config.kafka_bootstrap,
        "KJOURNAL_SPARK__MASTER": "local[2]",
        "KJOURNAL_SPARK__CHECKPOINT_LOCATION": str(home / "checkpoint"),
        "KJOURNAL_SPARK__JARS_DIR": str(spark_kafka_bundle(config.spark_version).folder(config)),
        "KJOURNAL_TOPICS__PATTERN": f"({topics})",
        "KJOURNAL_HTTP__HOST": config.host,
        "KJOURNAL_HTTP__PORT": str(config.replicator_port),
        **credentials_env(config, KAFKA_REPLICATOR, CASSANDRA_REPLICATOR),
    }


def _reader_env(config: DevConfig, home: Path) -> dict[str, str]:
    return {
        **_common_env(config),
        "KJOURNAL_HTTP__PORT": str(config.reader_port),
        **cassandra_env(config),
        **_auth_env(config),
        **credentials_env(config, KAFKA_READER, CASSANDRA_READER),
    }


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec(
        "writer",
        "kjournal_writer",
        lambda config: config.writer_port,
        "KJOURNAL_DEV_WRITER_PORT",
        _writer_env,
    ),
    ServiceSpec(
        "reader",
        "kjournal_reader",
        lambda config: config.reader_port,
        "KJOURNAL_DEV_READER_PORT",
        _reader_env,
    ),
    ServiceSpec(
        "replicator",
        "kjournal_replicator",
        lambda config: config.replicator_port,
        "KJOURNAL_DEV_REPLICATOR_PORT",
        replicator_env,
        health_path="/healthz",
        min_start_timeout_s=240,
    ),
)


def spec_named(name: str) -> ServiceSpec | None:
    return next((spec for spec in SERVICES if spec.name == name), None)


def start(spec: ServiceSpec, config: DevConfig, data_dir: Path) -> ComponentState:
    """Spawn the service (does not wait); its log is `<data dir>/<name>/<name>.log`."""
    home = data_dir / spec.name
    home.mkdir(parents=True, exist_ok=True)
    log_file = home / f"{spec.name}.log"
    env = {**os.environ, **spec.env_of(config, home)}
    pid = spawn([sys.executable, "-m", spec.module], log_file=log_file, cwd=home, env=env)
    return ComponentState(
        spec.name, pid, spec.url(config), str(log_file), spec.module, [spec.port_of(config)]
    )


def probe(url: str, path: str = "/readyz", timeout_s: float = 3.0) -> tuple[bool, str]:
    """(ready, detail) from the service's readiness endpoint."""
    try:
        with urllib.request.urlopen(url + path, timeout=timeout_s) as response:
            return True, _summary(response.read())
    except urllib.error.HTTPError as exc:
        return False, _summary(exc.read())
    except (OSError, ValueError) as exc:
        return False, f"not answering ({type(exc).__name__})"


def is_ready(url: str, path: str = "/readyz") -> bool:
    return probe(url, path)[0]


def _summary(body: bytes) -> str:
    try:
        report = json.loads(body)
        checks = report.get("checks", {})
        failed = [name for name, check in checks.items() if not check.get("ok")]
    except (ValueError, AttributeError):
        return "answering"
    return "ready" if not failed else "waiting for " + ", ".join(failed)
