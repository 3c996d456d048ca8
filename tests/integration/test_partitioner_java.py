"""The partitioner table is reproducible from the Java client, and records land where it says."""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC
from datetime import datetime

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import AIOKafkaProducer
from aiokafka import TopicPartition
from kjournal.kafka.records import consumed_record
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.wire import ConsumedRecord
from kjournal.wire import decode_action_record
from kjournal.wire import encode_action
from kjournal.wire import partition_for
from kjournal_dev.config import DevConfig

from tests.support.jshell import ROOT
from tests.support.jshell import jshell_output

FIXTURES = ROOT / "tests" / "fixtures" / "wire"
KAFKA_JARS = DevConfig.from_env().jars_dir / "kafka-4.3.1"
CLASS_PATH = [KAFKA_JARS / "kafka-clients-4.3.1.jar", KAFKA_JARS / "slf4j-api-1.7.36.jar"]


@pytest.mark.timeout(120)
def test_jshell_with_kafka_clients_reproduces_the_committed_table():
    jshell = shutil.which("jshell")
    if jshell is None or not all(jar.exists() for jar in CLASS_PATH):
        pytest.skip("needs jshell and the kafka-clients jar fetched by `scripts/dev up`")
    printed = jshell_output(jshell, CLASS_PATH, FIXTURES / "partitioner-java.jsh")
    assert printed == (FIXTURES / "partitioner-java.json").read_text()


KEYS = ["id", "player-42", "ключ", "日本語", "😀", "x" * 300]


async def _produce_marks(bootstrap: str, topic: str) -> list[tuple[str, int, int]]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    sent: list[tuple[str, int, int]] = []
    try:
        for id_ in KEYS:
            action = Mark(Key(topic, id_), datetime.now(UTC), MarkHeader(f"mark-{id_[:8]}"))
            parts = encode_action(action)
            meta = await producer.send_and_wait(
                parts.topic,
                key=parts.key,
                value=parts.value,
                headers=parts.headers,
                timestamp_ms=parts.timestamp_ms,
            )
            sent.append((id_, meta.partition, meta.offset))
    finally:
        await producer.stop()
    return sent


async def _consume(bootstrap: str, topic: str, partition: int, offset: int) -> ConsumedRecord:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    await consumer.start()
    try:
        consumer.seek(tp, offset)
        batch = await consumer.getmany(tp, timeout_ms=10_000, max_records=1)
    finally:
        await consumer.stop()
    return consumed_record(batch[tp][0])


@pytest.mark.kafka
def test_records_land_on_the_java_partition_and_decode_back(kafka_bootstrap: str, topic: str):
    sent = asyncio.run(_produce_marks(kafka_bootstrap, topic))

    for id_, partition, offset in sent:
        assert partition == partition_for(id_.encode(), 4), id_
        consumed = asyncio.run(_consume(kafka_bootstrap, topic, partition, offset))
        decoded = decode_action_record(consumed)
        assert decoded is not None
        assert isinstance(decoded.action, Mark)
        assert decoded.action.key == Key(topic, id_)
        assert (decoded.partition_offset.partition, decoded.offset) == (partition, offset)
