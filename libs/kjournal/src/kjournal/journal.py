"""The journal API: `Journals` owns the Kafka and Cassandra resources, `Journal` acts on one key.

    async with Journals(kafka_settings, eventual=reader) as journals:
        journal = journals.journal(Key("journal", "order-1"))
        await journal.append([Event(SeqNr(1), payload=JsonPayload({"a": 1}))])
        async for record in journal.read():
            ...

Without an `eventual` reader the journals can only write (the writer service has no Cassandra).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

from kjournal.errors import KJournalError
from kjournal.fold.head_info import HeadInfo
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.head import KafkaHead
from kjournal.kafka.head_cache import HeadCache
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings, HeadCacheSettings, KafkaSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics, NoopMetrics
from kjournal.model import (
    SEQ_NR_MAX,
    Delete,
    DeleteHeader,
    Event,
    EventRecord,
    Events,
    Key,
    Mark,
    MarkHeader,
    PartitionOffset,
    Purge,
    PurgeHeader,
    RecordMetadata,
    SeqNr,
    SeqRange,
    seq_nr,
)
from kjournal.model.head import Expiry
from kjournal.ports import EventualReader
from kjournal.read import JournalReader, ReadPlan
from kjournal.wire.record import append_action, encode_action


def _library_version() -> str:
    try:
        return f"kjournal-python/{version('kjournal')}"
    except PackageNotFoundError:
        return "kjournal-python/unknown"


class ReadsNotConfigured(KJournalError):
    """This Journals was opened without an eventual reader: it can only write."""


@dataclass(frozen=True, slots=True)
class AppendResult:
    partition_offset: PartitionOffset
    range: SeqRange
    timestamp: datetime


@dataclass(frozen=True, slots=True)
class JournalStatus:
    """A journal's head as a read sees it now, and how much of it is still only in Kafka."""

    key: Key
    seq_nr: SeqNr | None
    delete_to: SeqNr | None
    expiry: Expiry | None
    partition: int
    end_offset: int
    pointer2: int | None
    unreplicated_actions: int  # this journal's actions not yet in Cassandra
    unreplicated_offsets: int  # the partition's records not yet replicated (all journals)


@dataclass(frozen=True)
class JournalsSettings:
    kafka: KafkaSettings = field(default_factory=KafkaSettings)
    consumer_pool: ConsumerPoolSettings = field(default_factory=ConsumerPoolSettings)
    head_cache: HeadCacheSettings = field(default_factory=HeadCacheSettings)
    origin: str | None = field(default_factory=socket.gethostname)
    # payload bytes a scan of the Kafka tail keeps in memory before it re-reads instead
    scan_payload_budget_bytes: int = 16 * 1024 * 1024


class Journals:
    def __init__(
        self,
        settings: JournalsSettings,
        eventual: EventualReader | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.settings = settings
        self._eventual = eventual
        self._metrics = metrics or NoopMetrics()
        self._stack = AsyncExitStack()
        self._producer: ActionProducer | None = None
        self._topics: TopicPartitions | None = None
        self._reader: JournalReader | None = None
        self.head_cache: HeadCache | None = None
        self.version = _library_version()

    async def __aenter__(self) -> Journals:
        settings = self.settings
        stack = self._stack
        try:
            topics = self._topics = await stack.enter_async_context(TopicPartitions(settings.kafka))
            self._producer = await stack.enter_async_context(ActionProducer(settings.kafka, topics))
            if self._eventual is not None:
                pool = await stack.enter_async_context(
                    ConsumerPool(settings.kafka, settings.consumer_pool, self._metrics)
                )
                head = KafkaHead(
                    pool,
                    topics,
                    settings.consumer_pool.poll_timeout_ms,
                    settings.scan_payload_budget_bytes,
                    self._metrics,
                    settings.consumer_pool.max_poll_records,
                )
                if settings.head_cache.enabled:
                    self.head_cache = await stack.enter_async_context(
                        HeadCache(
                            settings.kafka,
                            settings.head_cache,
                            self._eventual,
                            topics,
                            self._metrics,
                        )
                    )
                self._reader = JournalReader(
                    self._eventual, head, head, self.head_cache, self._metrics
                )
        except BaseException:
            await stack.aclose()
            raise
        return self

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
            raise RuntimeError("Journals is not open: use `async with Journals(...)`")
        return self._producer

    @property
    def reader(self) -> JournalReader:
        if self._reader is None:
            raise ReadsNotConfigured("reads need an eventual reader (Cassandra)")
        return self._reader


class Journal:
    def __init__(self, journals: Journals, key: Key) -> None:
        self._journals = journals
        self.key = key

    @property
    def _origin(self) -> str | None:
        return self._journals.settings.origin

    async def append(
        self,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AppendResult:
        """Append an atomic batch; returns once the broker has acknowledged it."""
        metadata = metadata or RecordMetadata()
        batch = events if isinstance(events, Events) else Events(tuple(events), metadata.payload)
        timestamp = datetime.now(UTC)
        action = append_action(
            self.key,
            timestamp,
            batch,
            metadata,
            headers,
            origin=self._origin,
            version=self._journals.version,
        )
        position = await self._journals.producer.send(encode_action(action))
        return AppendResult(position, batch.range, timestamp)

    async def read(
        self, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """Events with from_ ≤ seqNr ≤ to in order, at most `limit`; streams, bounded memory."""
        seq_nr(from_)
        seq_nr(to)
        async for record in self._journals.reader.read(self.key, from_, to, limit):
            yield record

    async def plan(self) -> ReadPlan:
        return await self._journals.reader.plan(self.key)

    async def pointer(self) -> SeqNr | None:
        """The last seqNr, or None if the journal does not exist (or was purged)."""
        return (await self.plan()).info.seq_nr

    async def status(self) -> JournalStatus:
        plan = await self.plan()
        info: HeadInfo = plan.info
        expiry = plan.head.expiry if plan.head is not None and info.purged_at is None else None
        return JournalStatus(
            key=self.key,
            seq_nr=info.seq_nr,
            delete_to=info.delete_to,
            expiry=expiry,
            partition=plan.partition,
            end_offset=plan.end_offset,
            pointer2=plan.pointer2,
            unreplicated_actions=info.actions,
            unreplicated_offsets=plan.unreplicated_offsets,
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
        return await self._journals.producer.send(encode_action(action))

    async def purge(self) -> PartitionOffset:
        action = Purge(
            self.key, datetime.now(UTC), PurgeHeader(self._origin, self._journals.version)
        )
        return await self._journals.producer.send(encode_action(action))

    async def mark(self, id: str | None = None) -> PartitionOffset:
        """Write a barrier record (no storage effect) and return where it landed."""
        action = Mark(
            self.key,
            datetime.now(UTC),
            MarkHeader(id or str(uuid.uuid4()), self._origin, self._journals.version),
        )
        return await self._journals.producer.send(encode_action(action))
