"""The consumer pool's limits and the tail cache's recovery, on the real broker."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewPartitions
from kjournal.errors import DeadlineExceeded
from kjournal.errors import TopicRepartitioned
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.wire.partitioner import partition_for

from tests.integration.read.conftest import Stack
from tests.integration.read.conftest import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.anyio]


async def test_the_pool_bounds_consumers_and_times_out_clearly(kafka_bootstrap: str):
    settings = ConsumerPoolSettings(max_size=2, acquire_timeout_s=0.3, idle_timeout_s=0.4)
    async with ConsumerPool(KafkaSettings(bootstrap_servers=kafka_bootstrap), settings) as pool:
        async with pool.acquire(), pool.acquire():
            with pytest.raises(DeadlineExceeded, match=r"no Kafka consumer free within 0\.3 s"):
                async with pool.acquire():
                    pass
        assert pool.idle_count == 2
        for _ in range(200):  # the reaper closes them once past the idle timeout
            if pool.idle_count == 0:
                break
            await asyncio.sleep(0.05)
        assert pool.idle_count == 0
        async with pool.acquire() as consumer:  # and a new one is made on demand
            assert consumer.assignment() == set()


async def test_a_returned_consumer_is_paused_and_serves_its_topic_again(
    kafka_bootstrap: str, topic: str
):
    """Returned consumers keep their assignment, paused (they fetch nothing); the next caller for
    the same topic gets one that already tracks it (no metadata request for every topic)."""
    settings = ConsumerPoolSettings(max_size=3)
    async with ConsumerPool(KafkaSettings(bootstrap_servers=kafka_bootstrap), settings) as pool:
        async with pool.acquire(topic) as scanning, pool.acquire("elsewhere") as other:
            scanning.assign([TopicPartition(topic, 0)])
            scanning.seek(TopicPartition(topic, 0), 0)
        assert scanning.paused() == {TopicPartition(topic, 0)}
        assert other.assignment() == set()
        async with pool.acquire(topic) as again:
            assert again is scanning
            assert (await again.end_offsets([TopicPartition(topic, 0)]))[
                TopicPartition(topic, 0)
            ] == 0
            again.assign([TopicPartition(topic, 0)])  # a new assignment is not paused
            assert again.paused() == set()


@pytest.mark.cassandra
@pytest.mark.parametrize("partitions", [2])
async def test_more_partitions_rebuild_the_fold_and_misplaced_journals_fail_loudly(
    stack: Stack,
):
    moved = next(
        Key(stack.topic, f"moving-{n}")
        for n in range(1000)
        if partition_for(f"moving-{n}".encode(), 2) != partition_for(f"moving-{n}".encode(), 3)
    )
    await stack.writer.journal(moved).produce([Event(SeqNr(1))])
    await stack.replicate()
    await stack.writer.journal(moved).mark()  # unreplicated: reads consult the tail cache

    async with stack.reading(fold=True) as journals:
        assert await read_all(journals, moved) == ([(1, None)], 1)
        cache = journals.follower
        assert cache is not None
        assert cache.partitions(stack.topic) == 2
        admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
        await admin.start()
        try:
            await admin.create_partitions({stack.topic: NewPartitions(total_count=3)})
        finally:
            await admin.close()
        await asyncio.sleep(0.5)
        assert await journals.topics.count(stack.topic, refresh=True) == 3

        with pytest.raises(TopicRepartitioned, match="partition count changed"):
            await read_all(journals, moved)

        # a journal created after the change is read correctly, through the rebuilt cache
        fresh = Key(stack.topic, "after-the-change")
        await stack.writer.topics.count(stack.topic, refresh=True)
        await stack.writer.journal(fresh).produce([Event(SeqNr(1)), Event(SeqNr(2))])
        for _ in range(100):  # the cache checks the partition count every few seconds
            if cache.partitions(stack.topic) == 3 and cache.journals(stack.topic):
                break
            await asyncio.sleep(0.2)
        assert cache.partitions(stack.topic) == 3
        assert stack.metrics.counter_total("kjournal_fold_failures_total") >= 1
        assert await read_all(journals, fresh) == ([(1, None), (2, None)], 2)
