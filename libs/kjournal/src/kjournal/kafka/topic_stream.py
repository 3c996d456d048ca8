"""Following every partition of a topic with one group-less consumer: what the read side's fold
consumes (read/follower.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Mapping

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition

from kjournal.aio import uninterrupted
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.records import consumed_record
from kjournal.kafka.settings import KafkaSettings
from kjournal.read.follower import PartitionBatch

__all__ = ["KafkaTopicStream"]


class KafkaTopicStream:
    """Implements `read.follower.TopicStream`: keys, headers and values of every record, no
    consumer group, nothing committed."""

    def __init__(self, kafka: KafkaSettings, max_records: int = 1_000) -> None:
        self._kafka = kafka
        self._max_records = max_records

    async def follow(
        self, topic: str, starts: Mapping[int, int]
    ) -> AsyncGenerator[list[PartitionBatch], None]:
        consumer = AIOKafkaConsumer(
            **self._kafka.aiokafka_options(),
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=self._max_records,
            fetch_max_wait_ms=50,
        )
        try:
            with kafka_errors(topic):
                await uninterrupted(consumer.start())
            tps = [TopicPartition(topic, partition) for partition in starts]
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, starts[tp.partition])
            while True:
                with kafka_errors(topic):
                    polled = await consumer.getmany(
                        *tps, timeout_ms=100, max_records=self._max_records
                    )
                    batches = [
                        PartitionBatch(
                            tp.partition,
                            [consumed_record(record) for record in polled.get(tp, ())],
                            await consumer.position(tp),
                        )
                        for tp in tps
                    ]
                yield batches
        finally:
            await uninterrupted(consumer.stop())
