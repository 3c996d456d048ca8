"""ActionProducer's answers: what the producer gave up after retries is outcome-unknown (the
broker may hold it), what the broker refused outright is not; and the options that bound
delivery."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.errors import KafkaConnectionError
from aiokafka.errors import KafkaError
from aiokafka.errors import NodeNotReadyError
from aiokafka.errors import TopicAuthorizationFailedError
from aiokafka.errors import UnknownTopicOrPartitionError
from kjournal.errors import KafkaUnavailable
from kjournal.errors import OutcomeUnknown
from kjournal.errors import UnknownTopic
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.producer import producer_options
from kjournal.kafka.settings import KafkaSettings
from kjournal.wire.record import ProducerRecordParts

RECORD = ProducerRecordParts(topic="journal", key=b"id", value=b"{}", headers=[], timestamp_ms=0)


class _FailingDelivery:
    """Stands in for AIOKafkaProducer: the record is accepted, its delivery fails."""

    def __init__(self, error: KafkaError) -> None:
        self.error = error

    async def send(self, topic: str, **_: Any) -> asyncio.Future[object]:
        delivery: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        delivery.set_exception(self.error)
        return delivery


def _send_failing(client: object, topics: object = None) -> BaseException:
    """What ActionProducer.send raises over a stand-in for AIOKafkaProducer (and for its
    partition counts)."""

    async def run() -> BaseException:
        producer = ActionProducer.__new__(ActionProducer)  # no real client to leave unclosed
        producer._settings = KafkaSettings()
        producer._producer = client
        producer._topics = topics  # type: ignore[assignment]

        async def partition(topic: str, key: bytes) -> int:
            return 0

        producer.partition = partition  # type: ignore[method-assign]
        try:
            await producer.send(RECORD)
        except Exception as exc:
            return exc
        raise AssertionError("the send succeeded")

    return asyncio.run(run())


def _send_failing_with(error: KafkaError) -> BaseException:
    return _send_failing(_FailingDelivery(error))


@pytest.mark.parametrize("error", [KafkaConnectionError(), NodeNotReadyError()])
def test_a_record_given_up_after_retriable_errors_is_outcome_unknown(error: KafkaError) -> None:
    assert isinstance(_send_failing_with(error), OutcomeUnknown)


def test_a_record_the_broker_refused_is_not_outcome_unknown() -> None:
    raised = _send_failing_with(TopicAuthorizationFailedError())
    assert isinstance(raised, KafkaUnavailable)
    assert not isinstance(raised, OutcomeUnknown)


@pytest.mark.parametrize(
    ("delivery_ms", "request_ms", "expected"),
    [(15_000, 30_000, 7_500), (60_000, 30_000, 30_000), (1_000, 30_000, 1_000)],
)
def test_requests_take_at_most_half_the_delivery_timeout(
    delivery_ms: int, request_ms: int, expected: int
) -> None:
    settings = KafkaSettings(delivery_timeout_ms=delivery_ms, request_timeout_ms=request_ms)
    options = producer_options(settings)
    assert options["request_timeout_ms"] == expected
    assert options["enable_idempotence"] is False  # aiokafka retries idempotent batches forever
    assert options["acks"] == "all"


class _MetadataTimeout:
    """Stands in for AIOKafkaProducer whose metadata wait ran out of time: aiokafka then says
    UnknownTopicOrPartitionError, whether or not the topic exists."""

    async def send(self, topic: str, **_: Any) -> asyncio.Future[object]:
        raise UnknownTopicOrPartitionError()


class _Topics:
    def __init__(self, exists: bool) -> None:
        self.exists = exists
        self.refreshed = False

    async def count(self, topic: str, refresh: bool = False) -> int:
        self.refreshed = refresh
        if not self.exists:
            raise UnknownTopic(topic)
        return 1


@pytest.mark.parametrize("exists", [True, False], ids=["topic-exists", "topic-gone"])
def test_a_metadata_wait_that_ran_out_is_unknown_topic_only_if_the_topic_is_gone(
    exists: bool,
) -> None:
    topics = _Topics(exists)
    raised = _send_failing(_MetadataTimeout(), topics)
    assert topics.refreshed
    if exists:
        assert type(raised) is KafkaUnavailable  # nothing handed over: not outcome-unknown
    else:
        assert isinstance(raised, UnknownTopic)


class _Unreachable:
    """Stands in for AIOKafkaProducer when no broker answers."""

    def __init__(self) -> None:
        self.stopped = False

    async def start(self) -> None:
        raise KafkaConnectionError()

    async def stop(self) -> None:
        self.stopped = True


def test_a_producer_that_cannot_start_is_stopped_and_says_kafka_is_unavailable() -> None:
    client = _Unreachable()

    async def enter() -> None:
        producer = ActionProducer.__new__(ActionProducer)  # no real client to leave unclosed
        producer._producer = client
        async with producer:
            raise AssertionError("the producer started")

    with pytest.raises(KafkaUnavailable):
        asyncio.run(enter())
    assert client.stopped
