"""The read side of journals: `ReadSide` owns the consumers, the fold and the eventual store's
reader, `ReadableJournal` reads one key. What the reader service is made of; it has Kafka read
rights only and never produces (an import contract checks it).

    async with ReadSide(kafka_settings, eventual) as reads:
        journal = reads.journal(Key("journal", "order-1"))
        async for record in journal.read():
            ...

docs/architecture.md ("Reading") and docs/concurrency.md ("The fold") say how a read, a
pointer and an append's outcome are answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

from kjournal.aio import AsyncResource
from kjournal.feed.reading import TopicFeed
from kjournal.feed.states import DEFAULT_CAPACITY
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topic_stream import KafkaTopicStream
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.model import SEQ_NR_MAX
from kjournal.model import AppendOutcome
from kjournal.model import EventRecord
from kjournal.model import JournalStatus
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model import seq_nr
from kjournal.model.head import JournalHead
from kjournal.model.replication import TopicReplication
from kjournal.ports import EventualReader
from kjournal.read.follower import Follower
from kjournal.read.outcome import LocalOutcomes
from kjournal.read.settings import FoldSettings
from kjournal.read.view import JournalReader
from kjournal.read.view import JournalView
from kjournal.replication_status import replication_status

__all__ = ["ReadSide", "ReadableJournal"]


class ReadSide(AsyncResource):
    """The read resources of many journals; open with `async with`.

    eventual: the eventual store's read side (Cassandra).
    consumer_pool: the pooled Kafka consumers of scans (defaults when None).
    fold: the fold of each topic asked about (docs/concurrency.md; defaults when None;
        `FoldSettings(enabled=False)`: every question reads Cassandra and scans Kafka).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        eventual: EventualReader,
        *,
        consumer_pool: ConsumerPoolSettings | None = None,
        fold: FoldSettings | None = None,
        metrics: Metrics | None = None,
        topics: TopicPartitions | None = None,
    ) -> None:
        self.kafka = kafka
        self.eventual = eventual
        self.consumer_pool_settings = consumer_pool or ConsumerPoolSettings()
        self.fold_settings = fold or FoldSettings()
        self._metrics = metrics or NoopMetrics()
        self._given_topics = topics
        self._stack = AsyncExitStack()
        self._topics: TopicPartitions | None = None
        self._scanner: KafkaTailScanner | None = None
        self._reader: JournalReader | None = None
        self._outcomes: LocalOutcomes | None = None
        self.follower: Follower | None = None

    async def open(self) -> None:
        stack, metrics = self._stack, self._metrics
        topics = self._given_topics
        if topics is None:
            topics = await stack.enter_async_context(TopicPartitions(self.kafka))
        self._topics = topics
        pool_settings = self.consumer_pool_settings
        pool = await stack.enter_async_context(ConsumerPool(self.kafka, pool_settings, metrics))
        scanner = self._scanner = KafkaTailScanner(pool, topics, pool_settings, metrics)
        settings = self.fold_settings
        if settings.enabled:
            stream = KafkaTopicStream(self.kafka)
            self.follower = await stack.enter_async_context(
                Follower(stream, scanner, self.eventual, settings, metrics)
            )
        self._reader = JournalReader(
            self.eventual, scanner, scanner, self.follower, metrics, settings.wait_timeout_s
        )
        self._outcomes = LocalOutcomes(self._reader)

    async def close(self) -> None:
        self._reader = self._outcomes = self._scanner = self._topics = None
        self.follower = None
        await self._stack.aclose()

    def journal(self, key: Key) -> ReadableJournal:
        return ReadableJournal(self, key)

    @property
    def topics(self) -> TopicPartitions:
        return self._opened(self._topics)

    @property
    def reader(self) -> JournalReader:
        return self._opened(self._reader)

    @property
    def outcomes(self) -> LocalOutcomes:
        """Appends' outcomes, from the folds (what the writer service asks)."""
        return self._opened(self._outcomes)

    @property
    def scanner(self) -> KafkaTailScanner:
        return self._opened(self._scanner)

    async def replication(self, topic: str) -> TopicReplication:
        """How far replication of `topic` has come, per partition."""
        count = await self.topics.count(topic)
        return await replication_status(topic, count, self.scanner, self.eventual)

    def feed(self, states: int = DEFAULT_CAPACITY) -> TopicFeed:
        """A topic feed over these reads (docs/feed.md), keeping at most `states` journal states
        per subscriber."""
        return TopicFeed(self.scanner, self.reader, states)


class ReadableJournal:
    """What one journal's readers see: its events, pointer, status and appends' outcomes."""

    def __init__(self, side: ReadSide, key: Key) -> None:
        self._reads = side
        self.key = key

    @property
    def read_side(self) -> ReadSide:
        return self._reads

    async def read(
        self, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """Events with from_ ≤ seqNr ≤ to in order, at most `limit`; streams, bounded memory."""
        seq_nr(from_)
        seq_nr(to)
        async for record in self.read_side.reader.read(self.key, from_, to, limit):
            yield record

    def events(
        self, view: JournalView, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """The events of the journal as `view` saw it (a read of `view()` then `events`, so a
        caller can answer with the view's seqNr, its ETag, before streaming)."""
        seq_nr(from_)
        seq_nr(to)
        return self.read_side.reader.events(view, from_, to, limit)

    async def view(self) -> JournalView:
        """The journal as a read starting now sees it."""
        return await self.read_side.reader.view(self.key)

    async def pointer(self) -> SeqNr | None:
        """The last seqNr, or None if the journal does not exist (or was purged)."""
        return (await self.read_side.reader.view(self.key, rows=False)).info.seq_nr

    async def outcome(self, offset: int) -> AppendOutcome:
        """What the append rule made of this journal's append at `offset` (docs/concurrency.md)."""
        return await self.read_side.outcomes.outcome(self.key, offset)

    async def status(self, conflicts_shown: int = 20) -> JournalStatus:
        """The journal's state, what is not replicated yet, and its first `conflicts_shown`
        conflicting duplicates."""
        view = await self.read_side.reader.view(self.key, rows=False, fresh=True)
        info = view.info
        eventual = self.read_side.eventual
        stored = info.exists and info.purged_at is None
        conflicts, head = await asyncio.gather(
            eventual.conflicts(self.key, conflicts_shown),
            eventual.head(self.key) if stored else _no_head(),
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


async def _no_head() -> JournalHead | None:
    return None
