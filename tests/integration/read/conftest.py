"""A journal stack on the real Kafka and Cassandra: write-only and reading Journals, the eventual
reader, and replication driven by the core apply function up to chosen offsets."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.memory import InMemoryReplicatedStore
from kjournal.metrics import Metrics
from kjournal.metrics import RecordingMetrics
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.read.settings import FoldSettings
from kjournal.replicate import replicate_partition
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.replay import consume_range
from kjournal_dev.platform.replay import end_offsets
from kjournal_dev.platform.replay import replicate
from kjournal_dev.platform.topics import create_topic as create_topic_named
from kjournal_dev.platform.topics import delete_topics


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def journal_session(platform: Endpoints) -> Iterator[Session]:
    session = connect(
        CassandraSettings(contact_points=(platform.cassandra_host,), port=platform.cassandra_port)
    )
    yield session
    session.cluster.shutdown()


@dataclass
class Stack:
    bootstrap: str
    topic: str
    partitions: int
    tables: TableNames
    store: CassandraReplicatedStore
    eventual: CassandraEventualReader
    writer: Journals
    metrics: RecordingMetrics

    async def replicate(self, until: dict[int, int] | None = None) -> None:
        ends = await end_offsets(self.bootstrap, self.topic, self.partitions)
        for partition in range(self.partitions):
            target = ends[partition] if until is None else until.get(partition, ends[partition])
            await replicate(self.bootstrap, self.topic, partition, self.store, target)

    async def truth(self, key: Key) -> tuple[list[tuple[int, object]], int | None]:
        """Events and pointer once everything is replicated, from an in-memory replica."""
        ends = await end_offsets(self.bootstrap, self.topic, self.partitions)
        model = InMemoryReplicatedStore()
        for partition in range(self.partitions):
            records = await consume_range(self.bootstrap, self.topic, partition, 0, ends[partition])
            replicate_partition(self.topic, partition, records, model, datetime.now(UTC))
        head = model.head(key)
        return [_essence(e) for e in model.events(key)], None if head is None else head.seq_nr

    def reading(self, fold: bool, **overrides: object) -> Journals:
        return Journals(
            KafkaSettings(bootstrap_servers=self.bootstrap),
            eventual=self.eventual,
            fold=FoldSettings(enabled=fold, pointer_poll_interval_s=0.05),
            metrics=self.metrics,
            **overrides,  # type: ignore[arg-type]
        )


def _essence(record: EventRecord) -> tuple[int, object]:
    payload = record.event.payload
    return record.seq_nr, None if payload is None else payload.value


async def read_all(
    journals: Journals, key: Key, **kwargs: int
) -> tuple[list[tuple[int, object]], int | None]:
    journal = journals.journal(key)
    events = [_essence(record) async for record in journal.read(**kwargs)]
    return events, await journal.pointer()


async def create_topic(bootstrap: str, partitions: int) -> str:
    name = f"journal_r_{uuid.uuid4().hex[:10]}"
    await create_topic_named(bootstrap, name, partitions)
    await asyncio.sleep(0.2)  # let the new partitions' leaders settle
    return name


@pytest.fixture
def partitions() -> int:
    return 1


@pytest.fixture
async def stack(
    platform: Endpoints, journal_session: Session, keyspace: str, partitions: int
) -> AsyncIterator[Stack]:
    tables = TableNames(keyspace=keyspace)
    migrate(journal_session, CassandraSettings(keyspace=keyspace))
    topic = await create_topic(platform.kafka_bootstrap, partitions)
    eventual = await CassandraEventualReader.create(journal_session, tables)
    metrics: Metrics = RecordingMetrics()
    writer = Journals(KafkaSettings(bootstrap_servers=platform.kafka_bootstrap))
    async with writer:
        yield Stack(
            platform.kafka_bootstrap,
            topic,
            partitions,
            tables,
            CassandraReplicatedStore(journal_session, tables),
            eventual,
            writer,
            metrics,  # type: ignore[arg-type]
        )
    await delete_topics(platform.kafka_bootstrap, [topic])
