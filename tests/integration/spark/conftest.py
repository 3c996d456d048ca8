"""Fixtures for the Spark replicator tests: a Cassandra session built like the job builds its own,
a keyspace per module, and topic names under a per-module prefix that the job's pattern matches."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassandra.cluster import Session
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.integration.spark.support import PARTITIONS
from tests.integration.spark.support import SparkTopic
from tests.support.platform import schema_keyspace
from tests.support.platform import unique_name


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here runs the job on Spark against Kafka and Cassandra (`-m spark` selects them)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            for marker in (pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra):
                item.add_marker(marker)


@pytest.fixture(scope="module")
def module_keyspace(session: Session) -> Iterator[str]:
    """A keyspace with the journal schema, shared by the tests of one module."""
    with schema_keyspace(session, "kjspark") as name:
        yield name


@pytest.fixture(scope="module")
def topic_prefix() -> str:
    return unique_name("journal_spark")


@pytest.fixture(scope="module")
def topic_pattern(topic_prefix: str) -> str:
    return re.escape(topic_prefix) + "_.*"


@pytest.fixture(scope="module")
def new_topic(
    platform: Endpoints, session: Session, module_keyspace: str, topic_prefix: str
) -> Iterator[Callable[[], SparkTopic]]:
    """Creates fresh 4-partition topics matching the module's pattern, replicated into the
    module's keyspace; deletes them at the end."""
    created: list[str] = []

    def make() -> SparkTopic:
        name = f"{topic_prefix}_{len(created)}"
        asyncio.run(create_topic(platform.kafka_bootstrap, name, PARTITIONS))
        created.append(name)
        return SparkTopic(name, platform, session, module_keyspace)

    yield make
    if created:
        asyncio.run(delete_topics(platform.kafka_bootstrap, created))
