"""Session-wide access to the real platform started by infra/local (kjournal-dev)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.settings import CassandraSettings
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.lifecycle import Platform

from tests.support.reports import add_session_report


def start_platform() -> tuple[Platform, Endpoints]:
    """Start the platform, or reuse a running one; a failed start leaves nothing behind."""
    config = DevConfig.from_env()
    platform = Platform(config)
    was_running = config.state_file.exists()
    try:
        # Service tests start their own writers and readers, each configured for the test.
        endpoints = platform.up(with_services=False)
    except BaseException:
        if not was_running:
            platform.down()
        raise
    trace_to(endpoints)
    return platform, endpoints


def trace_to(endpoints: Endpoints) -> None:
    """Every service the tests start traces to the platform's collector, as `up`'s do (or,
    without a collector, not at all): the tests' processes inherit these variables."""
    if endpoints.otlp_endpoint is not None:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoints.otlp_endpoint
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "500"
        os.environ.pop("OTEL_SDK_DISABLED", None)
    elif "OTEL_EXPORTER_OTLP_ENDPOINT" not in os.environ:
        os.environ["OTEL_SDK_DISABLED"] = "true"


def keep_platform() -> bool:
    return os.environ.get("KJOURNAL_TEST_KEEP_PLATFORM", "") not in ("", "0", "false")


def unique_name(prefix: str) -> str:
    """A short unique name valid as both a Kafka topic and a Cassandra keyspace."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    assert re.fullmatch(r"[a-z][a-z0-9_]{0,47}", name)
    return name


@contextmanager
def schema_keyspace(session: Session, prefix: str) -> Iterator[str]:
    """A fresh keyspace named after `prefix`, with the journal schema; dropped afterwards."""
    name = unique_name(prefix)
    migrate(session, CassandraSettings(keyspace=name))
    yield name
    session.execute(f"DROP KEYSPACE IF EXISTS {name}")


def kafka_env(platform: Endpoints) -> dict[str, str]:
    """A service's variables for the platform's Kafka."""
    return {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": platform.kafka_bootstrap}


def cassandra_env(platform: Endpoints, keyspace: str) -> dict[str, str]:
    """A service's variables for `keyspace` on the platform's Cassandra."""
    return {
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": platform.cassandra_host,
        "KJOURNAL_CASSANDRA__PORT": str(platform.cassandra_port),
        "KJOURNAL_CASSANDRA__KEYSPACE": keyspace,
    }


def own_platform_config(state_dir: Path, **update: Any) -> DevConfig:
    """The developer's KJOURNAL_DEV_* settings (cache, Java, heaps) for a platform of a suite's
    own: every port a free loopback one, `state_dir` its state, and `update` on top."""
    ports = [name for name in DevConfig.model_fields if name.endswith("_port")]
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in ports]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        free = {name: int(sock.getsockname()[1]) for name, sock in zip(ports, sockets, strict=True)}
    return DevConfig.from_env().model_copy(update={**free, "state_dir": state_dir, **update})


@contextmanager
def own_platform(
    config: DevConfig, pytestconfig: pytest.Config, logs: str, title: str
) -> Iterator[tuple[Platform, Endpoints]]:
    """A suite's own platform (`config`), services included, up for the block. Then every
    component's log is copied to <cache>/test-logs/<logs> (pytest's tmp dirs do not outlive the
    run), reported under `title`, and the platform taken down."""
    platform = Platform(config)
    try:
        yield platform, platform.up(with_services=True)
    finally:
        kept = platform.config.cache_dir / "test-logs" / logs
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for component in platform.status():
            if component.log_file != "-":
                shutil.copy(component.log_file, kept / Path(component.log_file).name)
        add_session_report(pytestconfig, title, f"every component's log: {kept}")
        platform.down()


@dataclass
class OwnPlatform:
    """A suite's own platform, as `Platform.up` started it."""

    platform: Platform
    endpoints: Endpoints

    @property
    def config(self) -> DevConfig:
        return self.platform.config

    def url(self, service: str) -> str:
        return self.endpoints.services[service]
