"""The writer's produce span: PRODUCER kind, messaging attributes (partition and offset once
acknowledged), and its W3C context in the record's headers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from kjournal.kafka import producer as producer_module
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import KafkaSettings
from kjournal.spans.record_headers import record_context
from kjournal.wire.record import ProducerRecordParts
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode

from tests.unit.tracing.conftest import Spans

pytestmark = pytest.mark.anyio


@dataclass
class Sent:
    partition: int
    offset: int


class FakeKafka:
    def __init__(self, fail: Exception | None = None) -> None:
        self.records: list[dict[str, Any]] = []
        self.fail = fail

    async def send(self, topic: str, **record: Any) -> asyncio.Future[Sent]:
        if self.fail is not None:
            raise self.fail
        self.records.append({"topic": topic, **record})
        done: asyncio.Future[Sent] = asyncio.get_running_loop().create_future()
        done.set_result(Sent(record["partition"], 41 + len(self.records)))
        return done


class EightPartitions:
    async def count(self, topic: str, refresh: bool = False) -> int:
        return 8


@pytest.fixture
def producer_of(monkeypatch: pytest.MonkeyPatch) -> Callable[[FakeKafka], ActionProducer]:
    def make(kafka: FakeKafka) -> ActionProducer:
        monkeypatch.setattr(producer_module, "AIOKafkaProducer", lambda **options: kafka)
        return ActionProducer(KafkaSettings(), EightPartitions())  # type: ignore[arg-type]

    return make


RECORD = ProducerRecordParts(
    topic="journal",
    key=b"order-1",
    value=b'{"events":[]}',
    headers=[("journal.action", b"{}")],
    timestamp_ms=1,
)


async def test_a_record_is_sent_under_a_producer_span_whose_context_it_carries(
    spans: Spans, producer_of: Callable[[FakeKafka], ActionProducer]
) -> None:
    kafka = FakeKafka()
    with trace.get_tracer("test").start_as_current_span("POST") as server:
        position = await producer_of(kafka).send(RECORD, {"kjournal.action": "append"})
    span = spans.named("send journal")
    assert span.kind is SpanKind.PRODUCER
    assert span.parent == server.get_span_context()
    attributes = dict(span.attributes or {})
    assert attributes == {
        "messaging.system": "kafka",
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.destination.name": "journal",
        "messaging.kafka.message.key": "order-1",
        "messaging.message.body.size": len(RECORD.value or b""),
        "kjournal.action": "append",
        "messaging.destination.partition.id": str(position.partition),
        "messaging.kafka.offset": position.offset,
    }
    (sent,) = kafka.records
    carried, produced = record_context(sent["headers"]), span.get_span_context()
    assert carried is not None
    assert produced is not None
    assert (carried.trace_id, carried.span_id) == (produced.trace_id, produced.span_id)
    assert sent["headers"][0] == ("journal.action", b"{}")


async def test_a_failed_send_is_an_error_span(
    spans: Spans, producer_of: Callable[[FakeKafka], ActionProducer]
) -> None:
    with pytest.raises(Exception, match="down"):
        await producer_of(FakeKafka(fail=RuntimeError("down"))).send(RECORD)
    span = spans.named("send journal")
    assert span.status.status_code is StatusCode.ERROR
    assert [event.name for event in span.events] == ["exception"]


async def test_in_a_trace_not_sampled_no_span_is_made_and_the_record_carries_the_decision(
    spans: Spans, producer_of: Callable[[FakeKafka], ActionProducer]
) -> None:
    kafka = FakeKafka()
    unsampled = trace.SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=trace.TraceFlags(0))
    parent = trace.set_span_in_context(trace.NonRecordingSpan(unsampled))
    with trace.get_tracer("test").start_as_current_span("POST", context=parent) as server:
        assert not server.is_recording()
        await producer_of(kafka).send(RECORD)
    assert spans.finished() == []
    (sent,) = kafka.records
    carried = record_context(sent["headers"])
    assert carried is not None
    assert carried.trace_id == 0xABC
    assert not carried.trace_flags.sampled
