"""The journal API: `Journals` owns the Kafka and Cassandra resources, `Journal` acts on one key.

    async with Journals(kafka_settings, eventual=reader) as journals:
        journal = journals.journal(Key("journal", "order-1"))
        await journal.append([Event(SeqNr(1), payload=JsonPayload({"a": 1}))])
        async for record in journal.read():
            ...

Without an `eventual` reader the journals read nothing, and learn each append's outcome from
`outcomes` (the writer service asks the reader service: it has no Cassandra).
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

from opentelemetry.util.types import AttributeValue

from kjournal.errors import (
    AppendConflict,
    ConditionFailed,
    InvalidSeqNr,
    ReadsNotConfigured,
    SeqNrGap,
    WritesNotConfigured,
)
from kjournal.feed.reading import TopicFeed
from kjournal.feed.states import DEFAULT_CAPACITY
from kjournal.fold.append_rule import MAX_GAP
from kjournal.fold.head_info import HeadInfo
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings, KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topic_stream import KafkaTopicStream
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics, NoopMetrics
from kjournal.model import (
    SEQ_NR_MAX,
    AppendOutcome,
    AppendResult,
    Delete,
    DeleteHeader,
    Event,
    EventRecord,
    Events,
    JournalStatus,
    Key,
    Mark,
    MarkHeader,
    Outcome,
    PartitionOffset,
    Purge,
    PurgeHeader,
    RecordMetadata,
    SeqNr,
    SeqRange,
    seq_nr,
)
from kjournal.model.replication import TopicReplication
from kjournal.ports import AppendOutcomes, EventualReader
from kjournal.read.follower import Follower
from kjournal.read.outcome import LocalOutcomes
from kjournal.read.settings import FoldSettings
from kjournal.read.view import JournalReader, JournalView
from kjournal.replication_status import replication_status
from kjournal.spans import conventions as sem
from kjournal.spans import recording
from kjournal.wire.record import append_action, encode_action


def _library_version() -> str:
    try:
        return f"kjournal-python/{version('kjournal')}"
    except PackageNotFoundError:
        return "kjournal-python/unknown"


HOST_NAME = socket.gethostname()
"""The default `origin` written into action headers (the Scala library writes the host too)."""

ENCODE_IN_THREAD_EVENTS = 500
"""Appends of more events are encoded off the event loop (~5 ms of encoding on the loop at most)."""


class Journals:
    """The Kafka (and, for reads, Cassandra) resources of many journals; open with `async with`.

    kafka: how to reach the brokers.
    eventual: the eventual store's read side; without it the journals can only write.
    writes: whether to open a producer (a reader with read-only Kafka rights passes False).
    consumer_pool: the read side's pooled Kafka consumers (defaults when None).
    fold: the read side's fold of each topic asked about (docs/concurrency.md; defaults when
        None; `FoldSettings(enabled=False)`: every question reads Cassandra and scans Kafka).
    origin: written into every action header (None: none).
    outcomes: where an append's outcome is learned before `append` returns (docs/concurrency.md);
        default: this Journals' own reads. Without either, `append` raises WritesNotConfigured
        (`produce` writes a record without learning its outcome).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        *,
        eventual: EventualReader | None = None,
        writes: bool = True,
        consumer_pool: ConsumerPoolSettings | None = None,
        fold: FoldSettings | None = None,
        origin: str | None = HOST_NAME,
        metrics: Metrics | None = None,
        outcomes: AppendOutcomes | None = None,
    ) -> None:
        self.kafka = kafka
        self.consumer_pool_settings = consumer_pool or ConsumerPoolSettings()
        self.fold_settings = fold or FoldSettings()
        self.origin = origin
        self._writes = writes
        self._eventual = eventual
        self._metrics = metrics or NoopMetrics()
        self._stack = AsyncExitStack()
        self._producer: ActionProducer | None = None
        self._topics: TopicPartitions | None = None
        self._scanner: KafkaTailScanner | None = None
        self._reader: JournalReader | None = None
        self._outcomes = outcomes
        self.follower: Follower | None = None
        self.version = _library_version()

    async def __aenter__(self) -> Journals:
        stack = self._stack
        try:
            topics = self._topics = await stack.enter_async_context(TopicPartitions(self.kafka))
            if self._writes:
                self._producer = await stack.enter_async_context(ActionProducer(self.kafka, topics))
            if self._eventual is not None:
                await self._open_reads(stack, topics, self._eventual)
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def _open_reads(
        self, stack: AsyncExitStack, topics: TopicPartitions, eventual: EventualReader
    ) -> None:
        pool_settings = self.consumer_pool_settings
        pool = await stack.enter_async_context(
            ConsumerPool(self.kafka, pool_settings, self._metrics)
        )
        scanner = self._scanner = KafkaTailScanner(pool, topics, pool_settings, self._metrics)
        settings = self.fold_settings
        if settings.enabled:
            self.follower = await stack.enter_async_context(
                Follower(KafkaTopicStream(self.kafka), scanner, eventual, settings, self._metrics)
            )
        self._reader = JournalReader(
            eventual, scanner, scanner, self.follower, self._metrics, settings.wait_timeout_s
        )
        if self._outcomes is None:
            self._outcomes = LocalOutcomes(self._reader)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    def journal(self, key: Key) -> Journal:
        return Journal(self, key)

    @property
    def topics(self) -> TopicPartitions:
        """Partition counts, cached for `kafka.metadata_max_age_s`; `count(topic, refresh=True)`
        re-reads them (after adding partitions, say)."""
        if self._topics is None:
            raise RuntimeError("Journals is not open: use `async with Journals(...)`")
        return self._topics

    @property
    def producer(self) -> ActionProducer:
        if self._producer is None:
            if self._topics is not None and not self._writes:
                raise WritesNotConfigured("this Journals was opened with writes=False")
            raise RuntimeError("Journals is not open: use `async with Journals(...)`")
        return self._producer

    @property
    def outcomes(self) -> AppendOutcomes:
        if self._outcomes is None:
            raise WritesNotConfigured(
                "appends need their outcome: open Journals with an eventual reader or `outcomes`"
            )
        return self._outcomes

    @property
    def reader(self) -> JournalReader:
        if self._reader is None:
            raise ReadsNotConfigured("reads need an eventual reader (Cassandra)")
        return self._reader

    @property
    def eventual(self) -> EventualReader:
        if self._eventual is None:
            raise ReadsNotConfigured("reads need an eventual reader (Cassandra)")
        return self._eventual

    async def replication(self, topic: str) -> TopicReplication:
        """How far replication of `topic` has come, per partition (reads must be configured)."""
        if self._scanner is None or self._eventual is None:
            raise ReadsNotConfigured("replication status needs an eventual reader (Cassandra)")
        return await replication_status(
            topic, await self.topics.count(topic), self._scanner, self._eventual
        )

    def feed(self, states: int = DEFAULT_CAPACITY) -> TopicFeed:
        """A topic feed over these journals' reads (docs/feed.md), keeping at most `states`
        journal states per subscriber."""
        if self._scanner is None:
            raise ReadsNotConfigured("the topic feed needs an eventual reader (Cassandra)")
        return TopicFeed(self._scanner, self.reader, states)


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


async def _nothing() -> None:
    return None


class Journal:
    def __init__(self, journals: Journals, key: Key) -> None:
        self._journals = journals
        self.key = key

    @property
    def _origin(self) -> str | None:
        return self._journals.origin

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
        AppendConflict or ConditionFailed, and no reader will ever return the events.
        """
        outcomes = self._journals.outcomes
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
            origin=self._origin,
            version=self._journals.version,
            expect=expect,
        )
        if len(appended.events) > ENCODE_IN_THREAD_EVENTS:
            record = await asyncio.to_thread(encode_action, action)
        else:
            record = encode_action(action)
        attributes: dict[str, AttributeValue] | None = None
        if recording():
            attributes = {
                sem.ACTION: "append",
                sem.SEQ_NR_FROM: appended.range.from_,
                sem.SEQ_NR_TO: appended.range.to,
                sem.EVENTS: len(appended.events),
            }
        position = await self._journals.producer.send(record, attributes)
        return AppendResult(position, appended.range, timestamp)

    async def read(
        self, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """Events with from_ ≤ seqNr ≤ to in order, at most `limit`; streams, bounded memory."""
        seq_nr(from_)
        seq_nr(to)
        async for record in self._journals.reader.read(self.key, from_, to, limit):
            yield record

    def events(
        self, view: JournalView, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """The events of the journal as `view` saw it (a read of `view()` then `events`, so a
        caller can answer with the view's seqNr, its ETag, before streaming)."""
        seq_nr(from_)
        seq_nr(to)
        return self._journals.reader.events(view, from_, to, limit)

    async def outcome(self, offset: int) -> AppendOutcome:
        """What the append rule made of this journal's append at `offset` (docs/concurrency.md)."""
        return await self._journals.outcomes.outcome(self.key, offset)

    async def view(self) -> JournalView:
        """The journal as a read starting now sees it (what `read`, `pointer` and `status` use)."""
        return await self._journals.reader.view(self.key)

    async def pointer(self) -> SeqNr | None:
        """The last seqNr, or None if the journal does not exist (or was purged)."""
        return (await self._journals.reader.view(self.key, rows=False)).info.seq_nr

    async def status(self, conflicts_shown: int = 20) -> JournalStatus:
        """The journal's head, what is not replicated yet, and its first `conflicts_shown`
        conflicting duplicates."""
        view = await self._journals.reader.view(self.key, rows=False, fresh=True)
        info: HeadInfo = view.info
        eventual = self._journals.eventual
        stored = info.exists and info.purged_at is None
        conflicts, head = await asyncio.gather(
            eventual.conflicts(self.key, conflicts_shown),
            eventual.head(self.key) if stored else _nothing(),
        )
        # The expiry is the replicator's to compute (its clock, its time zone): Cassandra's.
        expiry = head.expiry if head is not None else None
        return JournalStatus(
            key=self.key,
            seq_nr=info.seq_nr,
            delete_to=info.delete_to,
            expiry=expiry,
            partition=view.partition,
            end_offset=view.end_offset,
            pointer2=view.pointer2,
            unreplicated_actions=info.actions,
            unreplicated_offsets=view.unreplicated_offsets,
            unreplicated_duplicates=info.duplicates,
            conflicts=None if conflicts is None else tuple(conflicts),
            quarantine_known=eventual.quarantine_known,
        )

    async def delete(self, to: int) -> PartitionOffset | None:
        """Delete events with seqNr ≤ to (never future ones).

        With reads configured, `to` is clamped to the pointer and nothing is written for a journal
        that does not exist; a write-only Journals sends the delete as asked (the replicator clamps).
        """
        bound = seq_nr(to)
        if self._journals._reader is not None:
            pointer = await self.pointer()
            if pointer is None:
                return None
            bound = SeqNr(min(bound, pointer))
        action = Delete(
            self.key,
            datetime.now(UTC),
            DeleteHeader(bound, self._origin, self._journals.version),
        )
        attributes: dict[str, AttributeValue] | None = None
        if recording():
            attributes = {sem.ACTION: "delete", sem.DELETE_TO: bound}
        return await self._journals.producer.send(encode_action(action), attributes)

    async def purge(self) -> PartitionOffset:
        action = Purge(
            self.key, datetime.now(UTC), PurgeHeader(self._origin, self._journals.version)
        )
        attributes = {sem.ACTION: "purge"} if recording() else None
        return await self._journals.producer.send(encode_action(action), attributes)

    async def mark(self, id: str | None = None) -> PartitionOffset:
        """Write a barrier record (no storage effect) and return where it landed."""
        action = Mark(
            self.key,
            datetime.now(UTC),
            MarkHeader(id or str(uuid.uuid4()), self._origin, self._journals.version),
        )
        attributes = {sem.ACTION: "mark"} if recording() else None
        return await self._journals.producer.send(encode_action(action), attributes)
