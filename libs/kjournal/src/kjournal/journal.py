"""The journal API: `Journals` owns the Kafka and Cassandra resources, `Journal` acts on one key.

    async with Journals(kafka_settings, eventual=reader) as journals:
        journal = journals.journal(Key("journal", "order-1"))
        await journal.append([Event(SeqNr(1), payload=JsonPayload({"a": 1}))])
        async for record in journal.read():
            ...

Without an `eventual` reader the journals can only write (the writer service has no Cassandra).
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

from kjournal.errors import ReadsNotConfigured, WritesNotConfigured
from kjournal.fold.head_info import HeadInfo
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings, KafkaSettings, TailCacheSettings
from kjournal.kafka.tail_cache import TailCache
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics, NoopMetrics
from kjournal.model import (
    SEQ_NR_MAX,
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
    PartitionOffset,
    Purge,
    PurgeHeader,
    RecordMetadata,
    SeqNr,
    seq_nr,
)
from kjournal.model.replication import TopicReplication
from kjournal.ports import EventualReader
from kjournal.read import JournalReader, JournalView
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

ENCODE_IN_THREAD_EVENTS = 500
"""Appends of more events are encoded off the event loop (~5 ms of encoding on the loop at most)."""
"""The default `origin` written into action headers (the Scala library writes the host too)."""


class Journals:
    """The Kafka (and, for reads, Cassandra) resources of many journals; open with `async with`.

    kafka: how to reach the brokers.
    eventual: the eventual store's read side; without it the journals can only write.
    writes: whether to open a producer (a reader with read-only Kafka rights passes False).
    consumer_pool, tail_cache: the read side's Kafka consumers (defaults when None).
    origin: written into every action header (None: none).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        *,
        eventual: EventualReader | None = None,
        writes: bool = True,
        consumer_pool: ConsumerPoolSettings | None = None,
        tail_cache: TailCacheSettings | None = None,
        origin: str | None = HOST_NAME,
        metrics: Metrics | None = None,
    ) -> None:
        self.kafka = kafka
        self.consumer_pool_settings = consumer_pool or ConsumerPoolSettings()
        self.tail_cache_settings = tail_cache or TailCacheSettings()
        self.origin = origin
        self._writes = writes
        self._eventual = eventual
        self._metrics = metrics or NoopMetrics()
        self._stack = AsyncExitStack()
        self._producer: ActionProducer | None = None
        self._topics: TopicPartitions | None = None
        self._scanner: KafkaTailScanner | None = None
        self._reader: JournalReader | None = None
        self.tail_cache: TailCache | None = None
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
        if self.tail_cache_settings.enabled:
            self.tail_cache = await stack.enter_async_context(
                TailCache(self.kafka, self.tail_cache_settings, eventual, topics, self._metrics)
            )
        self._reader = JournalReader(eventual, scanner, scanner, self.tail_cache, self._metrics)

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
    ) -> AppendResult:
        """Append events atomically (one record); returns once the broker acknowledged it.

        A large append is encoded in a worker thread: a loop serving others is never held up for
        long (encoding runs event by event, releasing the interpreter lock in between).
        """
        metadata = metadata or RecordMetadata()
        appended = events if isinstance(events, Events) else Events(tuple(events), metadata.payload)
        timestamp = datetime.now(UTC)
        action = append_action(
            self.key,
            timestamp,
            appended,
            metadata,
            headers,
            origin=self._origin,
            version=self._journals.version,
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

    async def view(self) -> JournalView:
        """The journal as a read starting now sees it (what `read`, `pointer` and `status` use)."""
        return await self._journals.reader.view(self.key)

    async def pointer(self) -> SeqNr | None:
        """The last seqNr, or None if the journal does not exist (or was purged)."""
        return (await self.view()).info.seq_nr

    async def status(self, conflicts_shown: int = 20) -> JournalStatus:
        """The journal's head, what is not replicated yet, and its first `conflicts_shown`
        conflicting duplicates."""
        view = await self.view()
        info: HeadInfo = view.info
        expiry = view.head.expiry if view.head is not None and info.purged_at is None else None
        eventual = self._journals.eventual
        conflicts = await eventual.conflicts(self.key, conflicts_shown)
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
