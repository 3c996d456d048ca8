"""The writer's producer gives a record up at the delivery timeout, even while the broker stalls
with the connection open: a client's resend never races a copy the producer keeps retrying."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from kjournal.kafka.producer import producer_options
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.platform.topics import create_topic

from tests.faults.platform import KAFKA
from tests.faults.platform import FaultPlatform

pytestmark = [pytest.mark.faults, pytest.mark.kafka, pytest.mark.timeout(180)]

DELIVERY_TIMEOUT_MS = 4_000
BOUND_TOPIC = "producer_bound"  # outside the replicator's pattern: nothing replicates it


def test_a_stalled_broker_makes_the_producer_give_the_record_up(
    faults_platform: FaultPlatform,
) -> None:
    bootstrap = faults_platform.endpoints.kafka_bootstrap
    settings = KafkaSettings(bootstrap_servers=bootstrap, delivery_timeout_ms=DELIVERY_TIMEOUT_MS)

    async def run() -> tuple[float, BaseException | None]:
        await create_topic(bootstrap, BOUND_TOPIC, 1)
        producer = AIOKafkaProducer(**producer_options(settings))
        await producer.start()
        try:
            await producer.send_and_wait(BOUND_TOPIC, b"warm-up", key=b"k")  # metadata known
            with faults_platform.frozen(KAFKA):
                started = time.monotonic()
                delivery = await producer.send(BOUND_TOPIC, b"stalled", key=b"k")
                # well past the bound: an idempotent aiokafka producer would still be retrying
                done, _ = await asyncio.wait({delivery}, timeout=DELIVERY_TIMEOUT_MS / 1000 * 3)
                elapsed = time.monotonic() - started
                assert done, "the producer still retries the record past the delivery timeout"
            return elapsed, delivery.exception()
        finally:
            await producer.stop()

    elapsed, error = asyncio.run(run())
    assert isinstance(error, KafkaError), f"the record was not given up with an error: {error!r}"
    assert elapsed >= DELIVERY_TIMEOUT_MS / 1000 / 2, "given up before a request could time out"
