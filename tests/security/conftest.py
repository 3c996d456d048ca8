"""The secured platform the security tests run against: Kafka with SCRAM users and ACLs,
Cassandra with roles, the writer, reader and replicator with their own credentials and HTTP
authentication, on free loopback ports with a state directory of its own. Started once for the
package (`kjournal-dev up --secure` does the same for a developer) and taken down after it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from kjournal_dev.config import DevConfig
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.tokens import DevIssuer

from tests.support.platform import OwnPlatform
from tests.support.platform import own_platform
from tests.support.platform import own_platform_config

TOPIC = "journal_sec"
PARTITIONS = 4
KEYSPACE = "journal_sec"


def secure_config(state_dir: Path) -> DevConfig:
    """The suite's own ports, state, topic and keyspace, secured."""
    return own_platform_config(
        state_dir, topics=(TOPIC,), partitions=PARTITIONS, keyspace=KEYSPACE, secure=True
    )


@asynccontextmanager
async def topic_from_the_start(options: Mapping[str, Any]) -> AsyncIterator[AIOKafkaConsumer]:
    """A consumer with `options` (aiokafka's), no group, at offset 0 of every partition of TOPIC."""
    consumer = AIOKafkaConsumer(**options, enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        for partition in partitions:
            consumer.seek(partition, 0)
        yield consumer
    finally:
        await consumer.stop()


@dataclass
class SecuredPlatform(OwnPlatform):
    credentials: Credentials
    issuer: DevIssuer


@pytest.fixture(scope="package")
def secured(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[SecuredPlatform]:
    config = secure_config(tmp_path_factory.mktemp("secured-state"))
    with own_platform(config, pytestconfig, "security", "secured platform logs") as running:
        platform, endpoints = running
        credentials = Credentials.load(platform.config.credentials_file)
        assert credentials is not None
        yield SecuredPlatform(platform, endpoints, credentials, DevIssuer(platform.config.auth_dir))
