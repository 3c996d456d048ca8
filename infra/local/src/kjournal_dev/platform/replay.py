"""Replication without Spark, for tests, benchmarks and tools: Kafka records →
`replicate_partition` → a ReplicatedStore, and the Kafka reads it needs."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from kjournal.kafka.offsets import end_offsets as kafka_end_offsets
from kjournal.kafka.records import consumed_record
from kjournal.ports import ReplicatedStore
from kjournal.replicate import ReplicationResult
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord


async def consume_range(
    bootstrap: str, topic: str, partition: int, start: int, end: int
) -> list[ConsumedRecord]:
    """The records of one partition at offsets [start, end)."""
    if start >= end:
        return []
    tp = TopicPartition(topic, partition)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    consumer.assign([tp])
    await consumer.start()
    records: list[ConsumedRecord] = []
    try:
        consumer.seek(tp, start)
        while not records or records[-1].offset < end - 1:
            batch = await consumer.getmany(tp, timeout_ms=1000)
            for record in batch.get(tp, []):
                if record.offset < end:
                    records.append(consumed_record(record))
    finally:
        await consumer.stop()
    return records


async def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        ends = await kafka_end_offsets(consumer, [(topic, p) for p in range(partitions)])
    finally:
        await consumer.stop()
    return {partition: offset for (_, partition), offset in ends.items()}


async def replicate(
    bootstrap: str,
    topic: str,
    partition: int,
    store: ReplicatedStore,
    until: int | None = None,
    slice_records: int = 2_000,
) -> ReplicationResult | None:
    """Replicate one partition from its pointer2 up to offset `until` (exclusive; default: end),
    in slices of at most `slice_records` records as a replicator's micro-batches would be."""
    if until is None:
        until = (await end_offsets(bootstrap, topic, partition + 1))[partition]
    result = None
    while True:
        pointer = store.pointer2(topic, partition)
        start = 0 if pointer is None else pointer + 1
        if start >= until:
            return result
        stop = min(until, start + slice_records)
        records = await consume_range(bootstrap, topic, partition, start, stop)
        result = replicate_partition(topic, partition, records, store, datetime.now(UTC))
        if result.pointer2 is None or result.pointer2 < stop - 1:
            return result  # nothing moved: the slice was empty (offsets without records)
