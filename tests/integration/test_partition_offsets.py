"""Partitions' offsets (`kjournal.kafka.offsets`) against the real broker, as its two callers ask
for them: the replicator's driver (lag monitor, gap fill) and the reader (replication status). A
topic deleted between its listing and the offsets request included: it is left out, or named
unknown, instead of holding the answer for the Kafka request timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaProducer
from kjournal.errors import UnknownTopic
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.offsets import PartitionOffsets
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topics import TopicPartitions
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics
from kjournal_replicator.kafka_source import kafka_offsets
from kjournal_replicator.kafka_source import matching_partitions
from kjournal_replicator.settings import TopicSettings

from tests.support.platform import unique_name

# Ten minutes of request timeout (`settings`): waiting it out fails a test on this timeout instead.
pytestmark = [pytest.mark.kafka, pytest.mark.timeout(120)]

PARTITIONS = 2


async def _produce(bootstrap: str, topic: str, partition: int, records: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for i in range(records):
            await producer.send_and_wait(topic, f"record-{i}".encode(), partition=partition)
    finally:
        await producer.stop()


@pytest.fixture
def kept_and_doomed(kafka_bootstrap: str) -> Iterator[tuple[str, str]]:
    """Two topics of a fresh prefix; the kept one holds 3 records in partition 1."""
    prefix = unique_name("offsets")
    kept, doomed = f"{prefix}_kept", f"{prefix}_doomed"
    for name in (kept, doomed):
        asyncio.run(create_topic(kafka_bootstrap, name, PARTITIONS))
    try:
        asyncio.run(_produce(kafka_bootstrap, kept, 1, 3))
        yield kept, doomed
    finally:
        asyncio.run(delete_topics(kafka_bootstrap, [kept, doomed]))


@pytest.fixture
def settings(kafka_bootstrap: str) -> KafkaSettings:
    return KafkaSettings(bootstrap_servers=kafka_bootstrap, request_timeout_ms=600_000)


def test_the_replicator_leaves_out_a_topic_deleted_after_it_was_listed(
    kafka_bootstrap: str, settings: KafkaSettings, kept_and_doomed: tuple[str, str]
) -> None:
    kept, doomed = kept_and_doomed
    prefix = kept.removesuffix("_kept")
    listed = matching_partitions(settings, TopicSettings(pattern=f"{prefix}_.*"))
    assert listed == {kept: [0, 1], doomed: [0, 1]}

    asyncio.run(delete_topics(kafka_bootstrap, [doomed]))
    offsets = kafka_offsets(settings, listed)

    assert offsets == {(kept, 0): PartitionOffsets(0, 0), (kept, 1): PartitionOffsets(0, 3)}


def test_the_reader_names_a_topic_deleted_after_it_was_counted_unknown(
    kafka_bootstrap: str, settings: KafkaSettings, kept_and_doomed: tuple[str, str]
) -> None:
    kept, doomed = kept_and_doomed

    async def ask() -> dict[int, tuple[int, int]]:
        pool_settings = ConsumerPoolSettings()
        async with (
            ConsumerPool(settings, pool_settings) as pool,
            TopicPartitions(settings) as topics,
        ):
            scanner = KafkaTailScanner(pool, topics, pool_settings)
            assert await topics.count(doomed) == PARTITIONS
            await delete_topics(kafka_bootstrap, [doomed])
            with pytest.raises(UnknownTopic):
                await scanner.offsets(doomed, range(PARTITIONS))
            return await scanner.offsets(kept, range(PARTITIONS))

    assert asyncio.run(ask()) == {0: (0, 0), 1: (0, 3)}


def test_no_partitions_ask_kafka_nothing() -> None:
    unreachable = KafkaSettings(bootstrap_servers="127.0.0.1:1", request_timeout_ms=1_000)
    assert kafka_offsets(unreachable, {"journal": []}) == {}
