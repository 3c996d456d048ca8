"""The write side of journals: `WriteSide` owns the Kafka producer, `WritableJournal` acts on one
key. What the writer service is made of; it has Kafka rights only and imports nothing of the read
side (an import contract checks it).

    async with WriteSide(kafka_settings, outcomes=outcomes) as writes:
        journal = writes.journal(Key("journal", "order-1"))
        await journal.append([Event(SeqNr(1), payload=JsonPayload({"a": 1}))])

An append learns its outcome from `outcomes` before it returns (docs/concurrency.md): the
writer service asks the reader service, `kjournal.journal.Journals` its own read side.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import UTC
from datetime import datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version

from opentelemetry.util.types import AttributeValue

from kjournal.aio import AsyncResource
from kjournal.errors import AppendConflict
from kjournal.errors import ConditionFailed
from kjournal.errors import InvalidSeqNr
from kjournal.errors import SeqNrGap
from kjournal.errors import WritesNotConfigured
from kjournal.fold.append_rule import MAX_GAP
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Action
from kjournal.model import AppendOutcome
from kjournal.model import AppendResult
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import Outcome
from kjournal.model import PartitionOffset
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import seq_nr
from kjournal.ports import AppendOutcomes
from kjournal.spans import conventions as sem
from kjournal.spans import recording
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action

__all__ = ["ENCODE_IN_THREAD_EVENTS", "HOST_NAME", "WritableJournal", "WriteSide"]

HOST_NAME = socket.gethostname()
"""The default `origin` written into action headers (the Scala library writes the host too)."""

ENCODE_IN_THREAD_EVENTS = 500
"""Appends of more events are encoded off the event loop (~5 ms of encoding on the loop at most)."""


def _library_version() -> str:
    try:
        return f"kjournal-python/{version('kjournal')}"
    except PackageNotFoundError:
        return "kjournal-python/unknown"


class WriteSide(AsyncResource):
    """The Kafka producer of many journals; open with `async with`.

    outcomes: where an append's outcome is learned before `append` returns (None: `append`
        raises WritesNotConfigured until one is given; `produce` needs none).
    origin: written into every action header (None: none).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        *,
        outcomes: AppendOutcomes | None = None,
        origin: str | None = HOST_NAME,
        metrics: Metrics | None = None,
        topics: TopicPartitions | None = None,
    ) -> None:
        self.kafka = kafka
        self.origin = origin
        self.version = _library_version()
        self.outcomes_from: AppendOutcomes | None = outcomes
        self._metrics = metrics or NoopMetrics()
        self._given_topics = topics
        self._stack = AsyncExitStack()
        self._topics: TopicPartitions | None = None
        self._producer: ActionProducer | None = None

    async def open(self) -> None:
        stack = self._stack
        topics = self._given_topics
        if topics is None:
            topics = await stack.enter_async_context(TopicPartitions(self.kafka))
        self._topics = topics
        self._producer = await stack.enter_async_context(ActionProducer(self.kafka, topics))

    async def close(self) -> None:
        self._producer = self._topics = None
        await self._stack.aclose()

    def journal(self, key: Key) -> WritableJournal:
        return WritableJournal(self, key)

    @property
    def topics(self) -> TopicPartitions:
        return self._opened(self._topics)

    @property
    def producer(self) -> ActionProducer:
        return self._opened(self._producer)

    @property
    def outcomes(self) -> AppendOutcomes:
        if self.outcomes_from is None:
            raise WritesNotConfigured(
                "appends need their outcome: open the journals with reads or with `outcomes`"
            )
        return self.outcomes_from


class WritableJournal:
    """The actions one journal can take: each is one Kafka record."""

    def __init__(self, side: WriteSide, key: Key) -> None:
        self._writes = side
        self.key = key

    @property
    def write_side(self) -> WriteSide:
        return self._writes

    async def append(
        self,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        expect: int | None = None,
    ) -> AppendResult:
        """Append events atomically (one record); returns once the journal took them.

        `expect`: a condition (None: none; 0: the journal must not exist; p: it must be at seqNr
        p, and the events start at p + 1). The record is produced, then its outcome learned
        (docs/concurrency.md): a taken append returns its position; an identical retry of an
        append the journal holds returns the copy's position with `replay`; otherwise
        AppendConflict, ConditionFailed or SeqNrGap, and no reader will ever return the events.
        """
        outcomes = self.write_side.outcomes
        produced = await self.produce(events, metadata, headers, expect=expect)
        outcome = await outcomes.outcome(self.key, produced.partition_offset.offset)
        return _append_result(self.key, produced.range, outcome)

    async def produce(
        self,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        expect: int | None = None,
    ) -> AppendResult:
        """Produce the append's record and return where it landed, once the broker has it,
        without learning whether the journal takes it: the append rule may drop it
        (docs/concurrency.md). For tools and tests that write a history as it is; a service
        answering a caller uses `append`.

        A large append is encoded in a worker thread: a loop serving others is never held up for
        long (encoding runs event by event, releasing the interpreter lock in between).
        """
        metadata = metadata or RecordMetadata()
        appended = events if isinstance(events, Events) else Events(tuple(events), metadata.payload)
        _check_condition(expect, appended)
        timestamp = datetime.now(UTC)
        action = append_action(
            self.key,
            timestamp,
            appended,
            metadata,
            headers,
            origin=self.write_side.origin,
            version=self.write_side.version,
            expect=expect,
        )
        attributes: dict[str, AttributeValue] | None = None
        if recording():
            attributes = {
                sem.ACTION: "append",
                sem.SEQ_NR_FROM: appended.range.from_,
                sem.SEQ_NR_TO: appended.range.to,
                sem.EVENTS: len(appended.events),
            }
        offload = len(appended.events) > ENCODE_IN_THREAD_EVENTS
        position = await self._send(action, attributes, offload=offload)
        return AppendResult(position, appended.range, timestamp)

    async def delete(self, to: int) -> PartitionOffset:
        """Delete events with seqNr ≤ to, as asked (the replicator and readers clamp it to the
        journal's seqNr: never future events). `kjournal.journal.Journal.delete` clamps it
        first, and writes nothing for a journal that does not exist."""
        bound = seq_nr(to)
        side = self.write_side
        action = Delete(self.key, datetime.now(UTC), DeleteHeader(bound, side.origin, side.version))
        attributes: dict[str, AttributeValue] | None = None
        if recording():
            attributes = {sem.ACTION: "delete", sem.DELETE_TO: bound}
        return await self._send(action, attributes)

    async def purge(self) -> PartitionOffset:
        side = self.write_side
        action = Purge(self.key, datetime.now(UTC), PurgeHeader(side.origin, side.version))
        return await self._send(action, {sem.ACTION: "purge"} if recording() else None)

    async def mark(self, id: str | None = None) -> PartitionOffset:
        """Write a barrier record (no storage effect) and return where it landed."""
        side = self.write_side
        header = MarkHeader(id or str(uuid.uuid4()), side.origin, side.version)
        action = Mark(self.key, datetime.now(UTC), header)
        return await self._send(action, {sem.ACTION: "mark"} if recording() else None)

    async def _send(
        self,
        action: Action,
        attributes: dict[str, AttributeValue] | None,
        *,
        offload: bool = False,
    ) -> PartitionOffset:
        """Encode the action's record (in a worker thread if `offload`) and produce it."""
        record = (
            await asyncio.to_thread(encode_action, action) if offload else encode_action(action)
        )
        return await self.write_side.producer.send(record, attributes)


def _check_condition(expect: int | None, appended: Events) -> None:
    if expect is None or expect == 0:
        return
    if expect < 0 or expect >= SEQ_NR_MAX:
        raise InvalidSeqNr(f"an expected seqNr is 0 (no journal) or 1..{SEQ_NR_MAX - 1}")
    if appended.range.from_ != expect + 1:
        raise InvalidSeqNr(
            f"an append expecting the journal at seqNr {expect} starts at seqNr {expect + 1}, "
            f"not {appended.range.from_}"
        )


def _append_result(key: Key, range_: SeqRange, outcome: AppendOutcome) -> AppendResult:
    """The result of an append the journal took or replayed; the error of one it dropped."""
    kind = outcome.outcome
    if kind is Outcome.TAKEN or kind is Outcome.REPLAY:
        return AppendResult(
            outcome.position,
            range_,
            outcome.timestamp,
            replay=kind is Outcome.REPLAY,
            seq_nr=SeqNr(outcome.seq_nr),
        )
    if kind is Outcome.REFUSED:
        assert outcome.expected is not None
        raise ConditionFailed(key.topic, key.id, outcome.seq_nr, outcome.expected)
    if kind is Outcome.GAP:
        raise SeqNrGap(key.topic, key.id, outcome.seq_nr, range_.from_, MAX_GAP)
    raise AppendConflict(key.topic, key.id, outcome.seq_nr)
