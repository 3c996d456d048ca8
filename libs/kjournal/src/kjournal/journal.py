"""The in-process journal API: `Journals` opens both sides, `Journal` acts on one key.

    async with Journals(kafka_settings, eventual=reader) as journals:
        journal = journals.journal(Key("journal", "order-1"))
        await journal.append([Event(SeqNr(1), payload=JsonPayload({"a": 1}))])
        async for record in journal.read():
            ...

The two sides stand apart: the write side (`kjournal.writes`, a Kafka producer: the writer
service) and the read side (`kjournal.reads`, consumers, the fold and Cassandra's reader: the
reader service). `Journals` is both, for tools, tests and applications that hold every right:
its appends learn their outcome from its own read side. Without an `eventual` reader the
journals read nothing, and learn each append's outcome from `outcomes`.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

from kjournal.aio import AsyncResource
from kjournal.errors import ReadsNotConfigured
from kjournal.errors import WritesNotConfigured
from kjournal.feed.reading import TopicFeed
from kjournal.feed.states import DEFAULT_CAPACITY
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.model import AppendOutcome
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model import seq_nr
from kjournal.model.replication import TopicReplication
from kjournal.ports import AppendOutcomes
from kjournal.ports import EventualReader
from kjournal.read.follower import Follower
from kjournal.read.settings import FoldSettings
from kjournal.read.view import JournalReader
from kjournal.reads import ReadableJournal
from kjournal.reads import ReadSide
from kjournal.writes import HOST_NAME
from kjournal.writes import WritableJournal
from kjournal.writes import WriteSide

__all__ = ["HOST_NAME", "Journal", "Journals"]


class Journals(AsyncResource):
    """Both sides of many journals; open with `async with`.

    kafka: how to reach the brokers.
    eventual: the eventual store's read side; without it the journals can only write.
    writes: whether to open a producer (False: reads only).
    consumer_pool, fold: the read side's settings (docs/concurrency.md; defaults when None).
    origin: written into every action header (None: none).
    outcomes: where an append's outcome is learned before `append` returns (docs/concurrency.md);
        default: these journals' own read side. Without either, `append` raises
        WritesNotConfigured (`produce` writes a record without learning its outcome).
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
        self.origin = origin
        self._eventual = eventual
        self._writes = writes
        self._consumer_pool = consumer_pool
        self._fold = fold
        self._metrics = metrics or NoopMetrics()
        self._outcomes = outcomes
        self._stack = AsyncExitStack()
        self._topics: TopicPartitions | None = None
        self._write_side: WriteSide | None = None
        self._read_side: ReadSide | None = None

    async def open(self) -> None:
        stack = self._stack
        topics = self._topics = await stack.enter_async_context(TopicPartitions(self.kafka))
        if self._eventual is not None:
            self._read_side = await stack.enter_async_context(
                ReadSide(
                    self.kafka,
                    self._eventual,
                    consumer_pool=self._consumer_pool,
                    fold=self._fold,
                    metrics=self._metrics,
                    topics=topics,
                )
            )
        if self._writes:
            outcomes = self._outcomes
            if outcomes is None and self._read_side is not None:
                outcomes = self._read_side.outcomes
            self._write_side = await stack.enter_async_context(
                WriteSide(
                    self.kafka,
                    outcomes=outcomes,
                    origin=self.origin,
                    metrics=self._metrics,
                    topics=topics,
                )
            )

    async def close(self) -> None:
        self._write_side = self._read_side = self._topics = None
        await self._stack.aclose()

    def journal(self, key: Key) -> Journal:
        return Journal(self, key)

    @property
    def topics(self) -> TopicPartitions:
        """Partition counts, cached for `kafka.metadata_max_age_s`; `count(topic, refresh=True)`
        re-reads them (after adding partitions, say)."""
        return self._opened(self._topics)

    @property
    def write_side(self) -> WriteSide:
        if self._write_side is None and self._topics is not None and not self._writes:
            raise WritesNotConfigured("this Journals was opened with writes=False")
        return self._opened(self._write_side)

    @property
    def reads_configured(self) -> bool:
        return self._read_side is not None

    @property
    def read_side(self) -> ReadSide:
        if self._read_side is None:
            raise ReadsNotConfigured("reads need an eventual reader (Cassandra)")
        return self._read_side

    @property
    def producer(self) -> ActionProducer:
        return self.write_side.producer

    @property
    def outcomes(self) -> AppendOutcomes:
        return self.write_side.outcomes if self._writes else self.read_side.outcomes

    @property
    def reader(self) -> JournalReader:
        return self.read_side.reader

    @property
    def eventual(self) -> EventualReader:
        return self.read_side.eventual

    @property
    def follower(self) -> Follower | None:
        return self.read_side.follower if self._read_side is not None else None

    async def replication(self, topic: str) -> TopicReplication:
        """How far replication of `topic` has come, per partition (reads must be configured)."""
        return await self.read_side.replication(topic)

    def feed(self, states: int = DEFAULT_CAPACITY) -> TopicFeed:
        """A topic feed over these journals' reads (docs/feed.md), keeping at most `states`
        journal states per subscriber."""
        return self.read_side.feed(states)


class Journal(WritableJournal, ReadableJournal):
    """One journal's actions (the write side's) and reads (the read side's)."""

    def __init__(self, journals: Journals, key: Key) -> None:
        self._journals = journals
        self.key = key

    @property
    def write_side(self) -> WriteSide:
        return self._journals.write_side

    @property
    def read_side(self) -> ReadSide:
        return self._journals.read_side

    async def delete(self, to: int) -> PartitionOffset | None:  # type: ignore[override]
        """Delete events with seqNr ≤ to (never future ones).

        With reads configured, `to` is clamped to the pointer and nothing is written for a journal
        that does not exist (None); a write-only Journals sends the delete as asked (the
        replicator clamps)."""
        bound = seq_nr(to)
        if self._journals.reads_configured:
            pointer = await self.pointer()
            if pointer is None:
                return None
            bound = SeqNr(min(bound, pointer))
        return await WritableJournal.delete(self, bound)

    async def outcome(self, offset: int) -> AppendOutcome:
        """What the append rule made of this journal's append at `offset` (docs/concurrency.md),
        as these journals learn outcomes (their read side, or `outcomes`)."""
        return await self._journals.outcomes.outcome(self.key, offset)
