"""Fixtures of the operators' jobs' tests (expiry, check, repair): one keyspace and one running
replicator (`python -m kjournal_replicator`, local[2]) for the whole package, whose pattern matches
every topic the tests create; small topics of 4 partitions."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from collections.abc import Iterator

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.integration.spark.support import PARTITIONS
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import replicator_env
from tests.integration.spark.support import running_replicator
from tests.support.platform import unique_name


@pytest.fixture(scope="package")
def session(platform: Endpoints) -> Iterator[Session]:
    settings = CassandraSettings(
        contact_points=(platform.cassandra_host,), port=platform.cassandra_port
    )
    session = connect(settings)
    yield session
    session.cluster.shutdown()


@pytest.fixture(scope="package")
def ops_keyspace(session: Session) -> Iterator[str]:
    name = unique_name("kjops")
    migrate(session, CassandraSettings(keyspace=name))
    yield name
    session.execute(f"DROP KEYSPACE IF EXISTS {name}")


@pytest.fixture(scope="package")
def ops_prefix() -> str:
    return unique_name("journal_ops")


@pytest.fixture(scope="package")
def ops_env(
    platform: Endpoints,
    ops_keyspace: str,
    ops_prefix: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """The replicator's settings, which the check (and, plain, the expiry job) run with too."""
    folder = tmp_path_factory.mktemp("ops-replicator")
    return replicator_env(
        platform, ops_keyspace, re.escape(ops_prefix) + "_.*", folder / "checkpoint"
    )


@pytest.fixture(scope="package")
def replicator(
    ops_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicatorProcess]:
    log = tmp_path_factory.mktemp("ops-log") / "replicator.log"
    with running_replicator(ops_env, log, start_timeout_s=180) as process:
        yield process


@pytest.fixture(scope="package")
def new_topic(kafka_bootstrap: str, ops_prefix: str) -> Iterator[Callable[[], str]]:
    created: list[str] = []

    def make() -> str:
        name = f"{ops_prefix}_{len(created)}"
        asyncio.run(create_topic(kafka_bootstrap, name, PARTITIONS))
        created.append(name)
        return name

    yield make
    if created:
        asyncio.run(delete_topics(kafka_bootstrap, created))
