"""The driver's Kafka calls against the real broker: offsets of listed partitions, a topic deleted
between its listing and the offsets request included (the lag monitor and the gap fill ask in
that order, and a deletion is logged from the lag monitor's answer)."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaProducer
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.platform.topics import create_topic, delete_topics
from kjournal_replicator.kafka_source import PartitionOffsets, kafka_offsets, matching_partitions
from kjournal_replicator.settings import TopicSettings

from tests.support.platform import unique_name

pytestmark = [pytest.mark.kafka]

PARTITIONS = 2


async def _produce(bootstrap: str, topic: str, partition: int, records: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for i in range(records):
            await producer.send_and_wait(topic, f"record-{i}".encode(), partition=partition)
    finally:
        await producer.stop()


# Ten minutes of request timeout: waiting it out fails the test on its own timeout instead.
@pytest.mark.timeout(120)
def test_offsets_leave_out_a_topic_deleted_after_it_was_listed(kafka_bootstrap: str) -> None:
    prefix = unique_name("journal_src")
    kept, doomed = f"{prefix}_kept", f"{prefix}_doomed"
    for name in (kept, doomed):
        asyncio.run(create_topic(kafka_bootstrap, name, PARTITIONS))
    try:
        asyncio.run(_produce(kafka_bootstrap, kept, 1, 3))
        settings = KafkaSettings(bootstrap_servers=kafka_bootstrap, request_timeout_ms=600_000)
        listed = matching_partitions(settings, TopicSettings(pattern=f"{prefix}_.*"))
        assert listed == {kept: [0, 1], doomed: [0, 1]}

        asyncio.run(delete_topics(kafka_bootstrap, [doomed]))
        offsets = kafka_offsets(settings, listed)

        assert offsets == {(kept, 0): PartitionOffsets(0, 0), (kept, 1): PartitionOffsets(0, 3)}
    finally:
        asyncio.run(delete_topics(kafka_bootstrap, [kept, doomed]))


def test_no_partitions_ask_kafka_nothing() -> None:
    unreachable = KafkaSettings(bootstrap_servers="127.0.0.1:1", request_timeout_ms=1_000)
    assert kafka_offsets(unreachable, {"journal": []}) == {}
