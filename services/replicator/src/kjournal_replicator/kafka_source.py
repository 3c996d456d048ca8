"""Driver side Kafka: which partitions match the pattern, their offsets, and the source options.

The driver is synchronous (Spark's Python API is); each call runs a short-lived aiokafka client (an
admin client, or a consumer without a group that commits nothing) on a private event loop. It is called at start-up and once per lag
interval, so the connection cost does not matter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import TypeVar

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from kjournal.aio import uninterrupted
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.offsets import PartitionOffsets
from kjournal.kafka.offsets import partition_offsets
from kjournal.kafka.settings import KafkaSettings

from kjournal_replicator.settings import SparkSettings
from kjournal_replicator.settings import TopicSettings

__all__ = [
    "FETCH_MAX_WAIT_MS",
    "PartitionOffsets",
    "kafka_offsets",
    "matching_partitions",
    "source_options",
]

T = TypeVar("T")

FETCH_MAX_WAIT_MS = 20
# How long a task's read may find nothing where its planned records should be. Spark's default
# (spark.network.timeout, 120 s) plus the consumer's 60 s default API timeout held a micro-batch
# for three minutes when a topic was deleted under its read; then the batch is tried again
# without that topic (micro_batch.py). Still far above a broker restart's few seconds.
READ_STALL_TIMEOUT_MS = 30_000


def _run(kafka: KafkaSettings, use: Callable[[AIOKafkaConsumer], Awaitable[T]]) -> T:
    async def main() -> T:
        consumer = AIOKafkaConsumer(
            **kafka.aiokafka_options(), enable_auto_commit=False, group_id=None
        )
        try:
            with kafka_errors():
                await uninterrupted(consumer.start())
                return await use(consumer)
        finally:
            await uninterrupted(consumer.stop())

    return asyncio.run(main())


UNKNOWN_TOPIC_OR_PARTITION = 3  # Kafka's error code for a topic that is gone
SETTLE_ATTEMPTS = 10  # a topic just created has partitions without a leader for a moment


def matching_partitions(kafka: KafkaSettings, topics: TopicSettings) -> dict[str, list[int]]:
    """Every partition of every topic whose name matches the pattern (a topic just created is
    waited for until its partitions have leaders, for a few seconds at most)."""

    async def main() -> dict[str, list[int]]:
        admin = AIOKafkaAdminClient(**kafka.aiokafka_options())
        try:
            with kafka_errors():
                await uninterrupted(admin.start())
                for _ in range(SETTLE_ATTEMPTS):
                    names = sorted(n for n in await admin.list_topics() if topics.matches(n))
                    described = await admin.describe_topics(names) if names else []
                    if not any(_settling(entry) for entry in described):
                        break
                    await asyncio.sleep(0.5)
        finally:
            await uninterrupted(admin.close())
        return {
            entry["topic"]: sorted(p["partition"] for p in entry.get("partitions") or ())
            for entry in described
            if entry.get("error_code", 0) == 0
        }

    return asyncio.run(main())


def _settling(entry: dict[str, Any]) -> bool:
    """A topic with an error other than being gone, or a partition without a leader yet."""
    error = entry.get("error_code", 0)
    if error not in (0, UNKNOWN_TOPIC_OR_PARTITION):
        return True
    return any(p.get("error_code", 0) != 0 for p in entry.get("partitions") or ())


def kafka_offsets(
    kafka: KafkaSettings, partitions: dict[str, list[int]]
) -> dict[tuple[str, int], PartitionOffsets]:
    """Beginning and end offsets of the given partitions, but those Kafka no longer has (a topic
    deleted since the partitions were listed)."""
    if not any(partitions.values()):
        return {}

    wanted = [(topic, partition) for topic, numbers in partitions.items() for partition in numbers]
    return _run(kafka, lambda consumer: partition_offsets(consumer, wanted))


def source_options(kafka: KafkaSettings, spark: SparkSettings) -> dict[str, str]:
    """The Spark Kafka source's connection options (`kafka.*`) from the shared Kafka settings."""
    options = {f"kafka.{key}": value for key, value in kafka.java_options().items()}
    # A consumer keeps one fetch in flight per broker. After a micro-batch that fetch waits at the
    # broker for new data, and the next micro-batch's read (its seek discards the fetch) waits for
    # it to come back first: Kafka's 500 ms default, per partition a task reads, measured as
    # seconds of latency per micro-batch.
    options["kafka.fetch.max.wait.ms"] = str(FETCH_MAX_WAIT_MS)
    options["kafkaConsumer.pollTimeoutMs"] = str(READ_STALL_TIMEOUT_MS)
    options["kafka.default.api.timeout.ms"] = str(READ_STALL_TIMEOUT_MS)
    options.update(spark.kafka_options)
    return options
