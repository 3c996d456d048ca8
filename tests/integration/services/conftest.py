"""The writer and reader as real processes over real HTTP, against the real Kafka and Cassandra.

One writer and one reader serve the whole session (they take any topic starting with
"journal"); each test gets a fresh topic. Tests that need a differently configured service start
their own: a writer with the `start_writer` fixture, anything else with `start_service`.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from pathlib import Path

import pytest
from cassandra.cluster import Session
from kjournal.client import Client
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.security.tokens import DevIssuer

from tests.integration.services.support import RunningService
from tests.integration.services.support import start_service
from tests.integration.services.support import wait_for_topic
from tests.support.platform import cassandra_env
from tests.support.platform import kafka_env
from tests.support.platform import schema_keyspace

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


@pytest.fixture(scope="session")
def service_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("service-logs")


@pytest.fixture(scope="session")
def services_keyspace(kj_session: Session) -> Iterator[str]:
    """A keyspace with the journal schema, shared by the session's readers."""
    with schema_keyspace(kj_session, "kjsvc") as name:
        yield name


def kafka_settings(platform: Endpoints) -> dict[str, str]:
    return kafka_env(platform)


def writer_limits() -> dict[str, str]:
    return {
        "KJOURNAL_HTTP__MAX_BODY_BYTES": str(1024 * 1024),
        "KJOURNAL_KAFKA__MAX_RECORD_BYTES": "100000",
    }


def reader_settings(platform: Endpoints, keyspace: str) -> dict[str, str]:
    return {**kafka_env(platform), **cassandra_env(platform, keyspace)}


def reader_link(reader: RunningService) -> dict[str, str]:
    """A writer's link to the reader it asks for each append's outcome."""
    return {"KJOURNAL_READER__URL": reader.url}


def _writer(platform: Endpoints, reader: RunningService, logs: Path) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_writer",
        {**kafka_settings(platform), **writer_limits(), **reader_link(reader)},
        logs,
        ready_path="/readyz",
    )
    yield service
    assert service.stop(), service.log()


class WriterStarter:
    """Writers asking the session's reader, with kjournal's default limits but for the settings
    given; each must shut down gracefully once its fixture ends."""

    def __init__(self, platform: Endpoints, reader: RunningService, logs: Path) -> None:
        self._settings = {**kafka_settings(platform), **reader_link(reader)}
        self._logs = logs
        self._started: list[RunningService] = []

    def __call__(
        self, settings: Mapping[str, str] | None = None, *, ready_path: str = "/readyz"
    ) -> RunningService:
        service = start_service(
            "kjournal_writer",
            {**self._settings, **(settings or {})},
            self._logs,
            ready_path=ready_path,
        )
        self._started.append(service)
        return service

    def stop(self) -> None:
        for service in self._started:
            assert service.stop(), service.log()


@pytest.fixture(scope="module")
def start_writer(
    platform: Endpoints, reader: RunningService, service_logs: Path
) -> Iterator[WriterStarter]:
    """A test module's own writers (WriterStarter), stopped after its last test."""
    writers = WriterStarter(platform, reader, service_logs)
    yield writers
    writers.stop()


@pytest.fixture(scope="session")
def writer(
    platform: Endpoints, reader: RunningService, service_logs: Path
) -> Iterator[RunningService]:
    yield from _writer(platform, reader, service_logs)


@pytest.fixture(scope="session")
def second_writer(
    platform: Endpoints, reader: RunningService, service_logs: Path
) -> Iterator[RunningService]:
    """Another writer process like `writer`, asking the same reader: two replicas of the writer."""
    yield from _writer(platform, reader, service_logs)


def reader_of(platform: Endpoints, keyspace: str, logs: Path) -> Iterator[RunningService]:
    """For a fixture: a reader of `keyspace`, which must shut down gracefully afterwards."""
    service = start_service(
        "kjournal_reader", reader_settings(platform, keyspace), logs, ready_path="/readyz"
    )
    yield service
    assert service.stop(), service.log()


@pytest.fixture(scope="session")
def reader(
    platform: Endpoints, services_keyspace: str, service_logs: Path
) -> Iterator[RunningService]:
    yield from reader_of(platform, services_keyspace, service_logs)


@pytest.fixture
def topic(topic: str, kafka_bootstrap: str) -> str:
    """The shared fresh topic, once every partition has a leader."""
    return wait_for_topic(kafka_bootstrap, topic)


@pytest.fixture
def client(writer: RunningService, reader: RunningService) -> Iterator[Client]:
    with Client(writer.url, reader.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> DevIssuer:
    """A token issuer (kjournal-dev's) that the secured writer and reader trust."""
    return DevIssuer(tmp_path_factory.mktemp("issuer")).ensure()


@pytest.fixture(scope="session")
def secured_writer(
    platform: Endpoints,
    issuer: DevIssuer,
    secured_reader: RunningService,
    service_logs: Path,
) -> Iterator[RunningService]:
    """A writer with authentication on (KJOURNAL_AUTH__*), asking the secured reader."""
    service = start_service(
        "kjournal_writer",
        {
            **writer_limits(),
            **kafka_settings(platform),
            **issuer.service_env(),
            **reader_link(secured_reader),
        },
        service_logs,
    )
    yield service
    assert service.stop(), service.log()


@pytest.fixture(scope="session")
def secured_reader(
    platform: Endpoints, services_keyspace: str, issuer: DevIssuer, service_logs: Path
) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_reader",
        {**reader_settings(platform, services_keyspace), **issuer.service_env()},
        service_logs,
        ready_path="/readyz",
    )
    yield service
    assert service.stop(), service.log()
