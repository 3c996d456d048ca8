"""Fixtures for tests against the real Kafka broker and Cassandra node.

The platform is started once per test session (or an already running `kjournal-dev up` is reused)
and stopped at the end if this session started it (set KJOURNAL_TEST_KEEP_PLATFORM=1 to keep it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from cassandra.cluster import Cluster
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.support.kafka_journal_keyspace import create_kafka_journal_keyspace
from tests.support.platform import keep_platform
from tests.support.platform import start_platform
from tests.support.platform import unique_name


@pytest.fixture(scope="session")
def platform() -> Iterator[Endpoints]:
    dev, endpoints = start_platform()
    yield endpoints
    if endpoints.started and not keep_platform():
        dev.down()


@pytest.fixture(scope="session")
def kafka_bootstrap(platform: Endpoints) -> str:
    return platform.kafka_bootstrap


@pytest.fixture(scope="session")
def cassandra_cluster(platform: Endpoints) -> Iterator[Cluster]:
    cluster = Cluster([platform.cassandra_host], port=platform.cassandra_port, protocol_version=5)
    yield cluster
    cluster.shutdown()


@pytest.fixture(scope="session")
def cassandra_session(cassandra_cluster: Cluster) -> Session:
    return cassandra_cluster.connect()


@pytest.fixture(scope="session")
def cassandra_settings(platform: Endpoints) -> CassandraSettings:
    return CassandraSettings(
        contact_points=(platform.cassandra_host,), port=platform.cassandra_port
    )


@pytest.fixture(scope="session")
def kj_session(cassandra_settings: CassandraSettings) -> Iterator[Session]:
    """A session built the way kjournal builds them (execution profiles, tuple rows)."""
    session = connect(cassandra_settings)
    yield session
    session.cluster.shutdown()


@pytest.fixture(scope="session")
def session(kj_session: Session) -> Session:
    """`kj_session`, under the name the Spark, tracing, container and services suites use."""
    return kj_session


@pytest.fixture
def topic(kafka_bootstrap: str) -> Iterator[str]:
    """A fresh 4-partition journal topic, deleted after the test."""
    name = unique_name("journal_t")
    asyncio.run(create_topic(kafka_bootstrap, name, 4))
    yield name
    asyncio.run(delete_topics(kafka_bootstrap, [name]))


@pytest.fixture
def keyspace(cassandra_session: Session) -> Iterator[str]:
    """A fresh, empty keyspace, dropped after the test."""
    name = unique_name("kjt")
    cassandra_session.execute(
        f"CREATE KEYSPACE {name} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    yield name
    cassandra_session.execute(f"DROP KEYSPACE IF EXISTS {name}")


@pytest.fixture
def tables(kj_session: Session, keyspace: str) -> TableNames:
    """A fresh keyspace migrated to the current schema."""
    settings = CassandraSettings(keyspace=keyspace)
    migrate(kj_session, settings)
    return settings.names


@pytest.fixture
def kafka_journal_keyspace(kj_session: Session) -> Iterator[str]:
    """A fresh keyspace as kafka-journal (the Scala library) makes it, dropped after the test."""
    name = unique_name("kjscala")
    create_kafka_journal_keyspace(kj_session, name)
    yield name
    kj_session.execute(f"DROP KEYSPACE IF EXISTS {name}")
