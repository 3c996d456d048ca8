"""Produces journal actions: acks=all, bounded delivery, one record per action, partitioned like Java.

With tracing on, each record is sent under a PRODUCER span (`send <topic>`) whose W3C context
travels in the record's headers (kjournal.spans.record_headers), so the replicator can link its
work to it. In a trace that is not sampled no span is made; the record carries the current
context, not sampled, so the replicator knows not to link it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from aiokafka.errors import UnknownTopicOrPartitionError
from aiokafka.structs import RecordMetadata
from opentelemetry.trace import Span
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode
from opentelemetry.trace import get_current_span
from opentelemetry.util.types import AttributeValue

from kjournal.aio import AsyncResource
from kjournal.aio import uninterrupted
from kjournal.errors import KafkaUnavailable
from kjournal.errors import OutcomeUnknown
from kjournal.errors import RecordTooLarge
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.model import PartitionOffset
from kjournal.spans import conventions as sem
from kjournal.spans import installed
from kjournal.spans import recording
from kjournal.spans import tracer
from kjournal.spans.record_headers import trace_headers
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ProducerRecordParts

# Per-record overhead of Kafka's record batch format beyond key, value and headers.
_RECORD_OVERHEAD = 128


def producer_options(settings: KafkaSettings) -> dict[str, Any]:
    """The `AIOKafkaProducer` keyword arguments of an ActionProducer.

    Delivery is bounded by `delivery_timeout_ms`: aiokafka gives up a batch once it is older
    than the request timeout and its last request failed, and a request takes at most the
    request timeout, so with half the delivery timeout for each a record lands within about
    the delivery timeout of being sent, or never. Idempotence stays off because aiokafka's
    idempotent producer retries a batch forever; order still holds (aiokafka has one request
    in flight per partition and puts a failed batch back at the front), and a copy a retry
    writes twice is dropped by the duplicate rule like any resent append.
    """
    request_timeout_ms = max(
        1_000, min(settings.request_timeout_ms, settings.delivery_timeout_ms // 2)
    )
    return {
        **settings.aiokafka_options(),
        "request_timeout_ms": request_timeout_ms,
        "acks": "all",
        "enable_idempotence": False,
        "compression_type": None if settings.compression == "none" else settings.compression,
        "linger_ms": settings.linger_ms,
        "max_request_size": settings.max_record_bytes + 64 * 1024,
    }


class ActionProducer(AsyncResource):
    """Sends encoded actions; nothing is acknowledged that the broker has not acknowledged."""

    def __init__(self, settings: KafkaSettings, topics: TopicPartitions) -> None:
        self._settings = settings
        self._topics = topics
        self._producer = AIOKafkaProducer(**producer_options(settings))

    async def open(self) -> None:
        with kafka_errors():
            await uninterrupted(self._producer.start())

    async def close(self) -> None:
        await uninterrupted(self._producer.stop())

    async def partition(self, topic: str, key: bytes) -> int:
        return partition_for(key, await self._topics.count(topic))

    def check_size(
        self, record: ProducerRecordParts, headers: list[tuple[str, bytes]] | None = None
    ) -> None:
        size = (
            len(record.key)
            + len(record.value or b"")
            + sum(len(k) + len(v) for k, v in (record.headers if headers is None else headers))
            + _RECORD_OVERHEAD
        )
        if size > self._settings.max_record_bytes:
            raise RecordTooLarge(size, self._settings.max_record_bytes)

    async def send(
        self,
        record: ProducerRecordParts,
        span_attributes: Mapping[str, AttributeValue] | None = None,
    ) -> PartitionOffset:
        """Produce and wait for the broker's acknowledgement, at most `delivery_timeout_ms`.

        Beyond it, or when the producer gave the record up after retriable errors, OutcomeUnknown
        (504): the record may still land while aiokafka finishes the request in flight, but no
        later than about `delivery_timeout_ms` after it was sent (`producer_options`).
        `span_attributes` are added to the produce span (when tracing is on).
        """
        if not installed():
            return await self._send(record, record.headers, None)
        if not recording():  # a trace not sampled: no span, its context (and decision) travels on
            unsampled = trace_headers(get_current_span().get_span_context())
            return await self._send(record, [*record.headers, *unsampled], None)
        attributes: dict[str, AttributeValue] = {
            sem.MESSAGING_SYSTEM: sem.KAFKA,
            sem.MESSAGING_OPERATION_TYPE: "send",
            sem.MESSAGING_OPERATION_NAME: "send",
            sem.MESSAGING_DESTINATION: record.topic,
            sem.MESSAGING_KAFKA_KEY: record.key.decode("utf-8", "replace"),
            sem.MESSAGING_BODY_SIZE: len(record.value or b""),
        }
        if span_attributes:
            attributes.update(span_attributes)
        # Not made current: nothing under it makes spans, and a log line while sending names the
        # request's span (one attach and detach less per append).
        span = tracer().start_span(sem.send_span(record.topic), None, SpanKind.PRODUCER, attributes)
        try:
            headers = [*record.headers, *trace_headers(span.get_span_context())]
            position = await self._send(record, headers, span)
            span.set_attribute(sem.MESSAGING_KAFKA_OFFSET, position.offset)
            return position
        except Exception as exc:
            span.record_exception(exc, escaped=True)
            span.set_status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            span.end()

    async def _send(
        self, record: ProducerRecordParts, headers: list[tuple[str, bytes]], span: Span | None
    ) -> PartitionOffset:
        self.check_size(record, headers)
        partition = await self.partition(record.topic, record.key)
        if span is not None:
            span.set_attribute(sem.MESSAGING_PARTITION, str(partition))
        timeout_s = self._settings.delivery_timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout_s):
                with kafka_errors(
                    record.topic, len(record.value or b""), self._settings.max_record_bytes
                ):
                    delivery = await self._enqueue(record, partition, headers)
                    try:
                        # shielded: on timeout only the wait stops, not aiokafka's own delivery
                        sent = await asyncio.shield(delivery)
                    except KafkaError as exc:
                        if exc.retriable:
                            # given up after retries: a request may have reached the broker
                            raise OutcomeUnknown(
                                f"Kafka did not acknowledge the record ({exc!r}); it may have "
                                "been written: retrying is safe"
                            ) from exc
                        raise
        except TimeoutError:
            raise OutcomeUnknown(
                f"Kafka did not acknowledge the record within {timeout_s:g} s; it may still be "
                "written: retrying is safe"
            ) from None
        return PartitionOffset(sent.partition, sent.offset)

    async def _enqueue(
        self, record: ProducerRecordParts, partition: int, headers: list[tuple[str, bytes]]
    ) -> asyncio.Future[RecordMetadata]:
        """Hand the record to aiokafka's accumulator; nothing is sent yet.

        aiokafka raises UnknownTopicOrPartitionError here also when its metadata wait merely ran
        out of time (a stalled process, a slow broker), for a topic that exists. The partition
        count just read says the topic exists, so that is asked again: a topic gone since is
        UnknownTopic, otherwise the record was never handed over and Kafka is unavailable."""
        try:
            delivery: asyncio.Future[RecordMetadata] = await self._producer.send(
                record.topic,
                value=record.value,
                key=record.key,
                partition=partition,
                timestamp_ms=record.timestamp_ms,
                headers=headers,
            )
            return delivery
        except UnknownTopicOrPartitionError as exc:
            await self._topics.count(record.topic, refresh=True)
            raise KafkaUnavailable(
                f"Kafka's metadata for topic {record.topic!r} did not arrive in time; nothing "
                "was written"
            ) from exc
