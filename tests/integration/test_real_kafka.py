"""The broker started by infra/local is a real Kafka: records with headers go in and come out."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import AIOKafkaProducer
from aiokafka import TopicPartition

pytestmark = pytest.mark.kafka


async def _produce_and_consume(bootstrap: str, topic: str) -> tuple[int, list[object]]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        sent = await producer.send_and_wait(
            topic,
            key=b"entity-1",
            value=b'{"events":[]}',
            headers=[("journal.action", b'{"mark":{"id":"m-1"}}'), ("trace", b"abc")],
        )
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    partition = TopicPartition(topic, sent.partition)
    consumer.assign([partition])
    await consumer.start()
    try:
        consumer.seek(partition, sent.offset)
        batch = await consumer.getmany(partition, timeout_ms=10_000)
    finally:
        await consumer.stop()
    return sent.offset, list(batch.get(partition, []))


def test_a_record_with_headers_round_trips_through_the_broker(kafka_bootstrap: str, topic: str):
    offset, records = asyncio.run(_produce_and_consume(kafka_bootstrap, topic))

    assert len(records) == 1
    record = records[0]
    assert record.offset == offset  # type: ignore[attr-defined]
    assert record.key == b"entity-1"  # type: ignore[attr-defined]
    assert record.value == b'{"events":[]}'  # type: ignore[attr-defined]
    assert list(record.headers) == [  # type: ignore[attr-defined]
        ("journal.action", b'{"mark":{"id":"m-1"}}'),
        ("trace", b"abc"),
    ]
