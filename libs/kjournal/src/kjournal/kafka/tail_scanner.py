"""Reading one journal's unreplicated tail out of its partition, and partitions' offsets.

With tracing on, the seek is a span (`consumer seek`) and each poll a CONSUMER span
(`poll <topic>`, messaging semantic conventions) with the records it brought.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from opentelemetry.trace import SpanKind

from kjournal.errors import UnknownTopic
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.offsets import end_offsets
from kjournal.kafka.offsets import partition_offsets
from kjournal.kafka.records import consumed_record
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.metrics.catalogue import KAFKA_END_OFFSET_SECONDS
from kjournal.metrics.catalogue import KAFKA_POLL_SECONDS
from kjournal.metrics.catalogue import KAFKA_SEEK_SECONDS
from kjournal.metrics.catalogue import KAFKA_TAIL_RECORDS_SCANNED
from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.read.tail import Tail
from kjournal.read.tail import TailBuilder
from kjournal.spans import conventions as sem
from kjournal.spans import span
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record

_POLL_BYTES = 1 << 20  # record bytes materialized per poll, roughly
_FIRST_POLL_RECORDS = 4  # before record sizes are known


class KafkaTailScanner:
    """Scans offsets [start, end) of the key's partition, comparing record keys before parsing.

    Implements `read.tail.JournalPartitions`, `read.tail.TailScanner`, the fold's
    `read.follower.PartitionSource`, `replication_status.OffsetsSource` and the topic feed's
    `feed.source.TopicSource` (whole partitions, filtered by key).
    """

    def __init__(
        self,
        pool: ConsumerPool,
        topics: TopicPartitions,
        settings: ConsumerPoolSettings,
        metrics: Metrics | None = None,
    ) -> None:
        self._pool = pool
        self._topics = topics
        self._poll_timeout_ms = settings.poll_timeout_ms
        self._max_poll_records = settings.max_poll_records
        self._payload_budget = settings.scan_payload_budget_bytes
        self._metrics = metrics or NoopMetrics()

    async def partition(self, key: Key) -> int:
        return partition_for(key.id.encode(), await self._topics.count(key.topic))

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail:
        """This journal's actions in [start, end); payloads beyond the byte budget are dropped
        (and read again, streaming, when their events are needed)."""
        builder = TailBuilder(start, end, self._payload_budget)
        async for record in self.actions(key, partition, start, end):
            builder.add(record)
        return builder.build()

    async def end_offset(self, topic: str, partition: int) -> int:
        """The offset the next record will get (ListOffsets latest; writes nothing)."""
        return (await self.end_offsets(topic, [partition]))[partition]

    async def end_offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, int]:
        """The offset the next record of each partition will get (one ListOffsets request)."""
        async with self._pool.acquire(topic) as consumer:
            started = time.perf_counter()
            with kafka_errors(topic):
                ends = await end_offsets(consumer, [(topic, p) for p in partitions])
            self._metrics.observe(KAFKA_END_OFFSET_SECONDS.name, time.perf_counter() - started)
        return {partition: end for (_, partition), end in ends.items()}

    async def offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(beginning, end) offset of each partition: what Kafka still holds (writes nothing).
        UnknownTopic if the topic is gone (deleted since its partitions were counted)."""
        async with self._pool.acquire(topic) as consumer:
            with kafka_errors(topic):
                held = await partition_offsets(consumer, [(topic, p) for p in partitions])
        if len(held) < len(partitions):
            raise UnknownTopic(topic)
        return {partition: (o.beginning, o.end) for (_, partition), o in held.items()}

    async def partition_count(self, topic: str) -> int:
        return await self._topics.count(topic)

    async def actions(
        self, key: Key, partition: int, start: int, end: int
    ) -> AsyncIterator[ActionRecord]:
        """This journal's actions at offsets start ≤ offset < end, in order; others are skipped
        by key bytes, so their headers and payloads are never parsed."""
        async for record in self.records(key.topic, partition, start, end, key.id.encode().__eq__):
            action = decode_action_record(record)
            if action is not None:
                yield action

    async def records(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        accept: Callable[[bytes | None], bool],
    ) -> AsyncIterator[ConsumedRecord]:
        """The records at offsets start ≤ offset < end whose key `accept`s, in offset order,
        undecoded (the others are skipped by their key bytes alone)."""
        if start >= end:
            return
        tp = TopicPartition(topic, partition)
        async with self._pool.acquire(topic) as consumer:
            consumer.assign([tp])
            seek_started = time.perf_counter()
            with span(sem.SPAN_CONSUMER_SEEK, attributes={sem.MESSAGING_KAFKA_OFFSET: start}):
                consumer.seek(tp, start)
            self._metrics.observe(KAFKA_SEEK_SECONDS.name, time.perf_counter() - seek_started)
            async for record in self._scan(consumer, tp, end, accept):
                yield record

    async def follow(
        self,
        topic: str,
        starts: Mapping[int, int],
        accept: Callable[[bytes | None], bool],
        wait_s: float,
    ) -> AsyncIterator[list[ConsumedRecord]]:
        """The partitions' records from their `starts` on, for as long as the caller iterates:
        each batch holds what one poll brought whose key `accept`s (each partition's in offset
        order), an empty one when `wait_s` passed without any."""
        tps = {partition: TopicPartition(topic, partition) for partition in starts}
        async with self._pool.acquire(topic) as consumer:
            consumer.assign(list(tps.values()))
            for partition, tp in tps.items():
                consumer.seek(tp, starts[partition])
            while True:
                with kafka_errors(topic):
                    batch = await consumer.getmany(
                        *tps.values(),
                        timeout_ms=int(wait_s * 1000),
                        max_records=self._max_poll_records,
                    )
                yield [
                    consumed_record(record)
                    for records in batch.values()
                    for record in records
                    if accept(record.key)
                ]

    @staticmethod
    def _poll_attributes(tp: TopicPartition) -> dict[str, str]:
        return {
            sem.MESSAGING_SYSTEM: sem.KAFKA,
            sem.MESSAGING_OPERATION_TYPE: "receive",
            sem.MESSAGING_OPERATION_NAME: "poll",
            sem.MESSAGING_DESTINATION: tp.topic,
            sem.MESSAGING_PARTITION: str(tp.partition),
        }

    async def _scan(
        self,
        consumer: AIOKafkaConsumer,
        tp: TopicPartition,
        end: int,
        accept: Callable[[bytes | None], bool],
    ) -> AsyncIterator[ConsumedRecord]:
        position = -1
        scanned = 0
        max_records = min(_FIRST_POLL_RECORDS, self._max_poll_records)
        while position < end - 1:
            poll_started = time.perf_counter()
            with (
                span(
                    sem.poll_span(tp.topic), SpanKind.CONSUMER, self._poll_attributes(tp)
                ) as polled,
                kafka_errors(tp.topic),
            ):
                # Fetches are bounded by compressed bytes; bounding the records materialized per
                # poll (sized from the last poll's records) bounds the memory they take.
                batch = await consumer.getmany(
                    tp, timeout_ms=self._poll_timeout_ms, max_records=max_records
                )
                if polled is not None:
                    polled.set_attribute(sem.MESSAGING_BATCH_COUNT, len(batch.get(tp, ())))
            self._metrics.observe(KAFKA_POLL_SECONDS.name, time.perf_counter() - poll_started)
            records = batch.get(tp, [])
            if not records:
                with kafka_errors(tp.topic):
                    if await consumer.position(tp) >= end:
                        break
                    # An end beyond the partition's (an offset asked that no record has yet):
                    # the range past it holds nothing now, rather than a scan waiting for it.
                    ends = await end_offsets(consumer, [(tp.topic, tp.partition)])
                    if ends[(tp.topic, tp.partition)] <= await consumer.position(tp):
                        break
                continue
            polled_bytes = 0
            for record in records:
                polled_bytes += len(record.value or b"")
                position = record.offset
                if position >= end:
                    break
                scanned += 1
                if accept(record.key):
                    yield consumed_record(record)
            average = max(1, polled_bytes // len(records))
            max_records = max(1, min(self._max_poll_records, _POLL_BYTES // average))
        self._metrics.increment(KAFKA_TAIL_RECORDS_SCANNED.name, scanned)
