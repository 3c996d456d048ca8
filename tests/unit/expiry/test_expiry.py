"""Expiry over the in-memory store and an in-memory partition: which journals a run purges, which
it leaves alone and why, and that a purge it produces replicates like any other."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from datetime import date
from datetime import datetime
from datetime import timedelta
from functools import partial

import pytest
from kjournal.expiry import Skip
from kjournal.expiry import expire_topic
from kjournal.expiry import verdict
from kjournal.memory import InMemoryReplicatedStore
from kjournal.metrics import RecordingMetrics
from kjournal.model import ExpireAfter
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model.head import JournalHead
from kjournal.replicate import replicate_partition
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import broken
from kjournal.testing.records import purge_record
from kjournal.wire.record import ConsumedRecord

from tests.support.memory_read import InMemoryPartitionLog

pytestmark = pytest.mark.anyio

DAY = ExpireAfter(86_400 * 10**9)
WEEK = ExpireAfter(7 * 86_400 * 10**9)
TODAY = T0.date()  # replication at T0 with DAY gives expire_on = TODAY + 1


def key(id: str) -> Key:
    return Key(TOPIC, id)


class MemoryLog(InMemoryPartitionLog):
    """One partition of one topic; `purge` appends a purge record (after `before_purge` ran)."""

    def __init__(self) -> None:
        super().__init__(TOPIC, 1)
        self.log = self.written[0]
        self.before_purge: Callable[[Key], None] = lambda _: None

    def add(self, make: Callable[[int], ConsumedRecord]) -> None:
        self.log.append(make(len(self.log)))

    async def purge(self, key: Key) -> PartitionOffset:
        self.before_purge(key)
        self.add(lambda offset: purge_record(offset, key))
        return PartitionOffset(0, len(self.log) - 1)


class MemoryStore:
    """`ExpiryStore` over the in-memory replicated store (the index lookup is a filter)."""

    def __init__(self) -> None:
        self.store = InMemoryReplicatedStore()

    def expired(self, topic: str, on: date) -> list[str]:
        stored = sorted(self.store.keys(), key=str)
        return [
            k.id
            for k, head in zip(stored, self.store.heads(stored), strict=True)
            if k.topic == topic and head and head.expiry and head.expiry.on == on
        ]

    def pointer2(self, topic: str, partition: int) -> int | None:
        return self.store.pointer2(topic, partition)

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        return self.store.heads(keys)

    def replicate(self, log: MemoryLog, now: datetime = T0) -> None:
        replicate_partition(TOPIC, 0, log.log, self.store, now)


def _append(offset: int, key: Key) -> ConsumedRecord:
    return append_record(offset, [1], key, expire_after=DAY)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def world() -> tuple[MemoryStore, MemoryLog]:
    store, log = MemoryStore(), MemoryLog()
    log.add(lambda o: append_record(o, [1, 2], key("expiring"), expire_after=DAY))
    log.add(lambda o: append_record(o, [1], key("forever")))
    log.add(lambda o: append_record(o, [1], key("later"), expire_after=WEEK))
    store.replicate(log)
    return store, log


async def test_an_expired_journal_is_purged_through_the_log_and_others_are_not() -> None:
    store, log = world()
    assert store.store.head(key("expiring")).expiry.on == TODAY + timedelta(days=1)  # type: ignore[union-attr]

    early = await expire_topic(TOPIC, store, log, TODAY)
    assert early.expired == 0
    assert not early.purged
    assert len(log.log) == 3

    metrics = RecordingMetrics()
    report = await expire_topic(TOPIC, store, log, TODAY + timedelta(days=1), metrics=metrics)
    assert report.expired == 1
    assert report.purged == [(key("expiring"), PartitionOffset(0, 3))]
    assert metrics.counters["kjournal_expiry_journals_purged_total"] == {(("topic", TOPIC),): 1}

    store.replicate(log)
    assert store.store.head(key("expiring")) is None
    assert store.store.head(key("forever")) is not None
    assert store.store.head(key("later")) is not None
    assert store.store.events(key("expiring")) == []


async def test_a_second_run_before_replication_finds_the_purge_pending_and_after_it_nothing() -> (
    None
):
    store, log = world()
    day = TODAY + timedelta(days=1)
    await expire_topic(TOPIC, store, log, day)
    again = await expire_topic(TOPIC, store, log, day)
    assert again.purged == []
    assert again.skipped == {Skip.PURGE_PENDING: [key("expiring")]}
    assert len(log.log) == 4
    store.replicate(log)
    last = await expire_topic(TOPIC, store, log, day)
    assert last.expired == 0
    assert last.purged == []
    assert len(log.log) == 4


async def test_a_journal_appended_to_since_is_left_alone_replicated_or_not() -> None:
    store, log = world()
    day = TODAY + timedelta(days=1)
    # Appended to again and replicated a day later: its expire_on moved.
    log.add(lambda o: append_record(o, [3], key("expiring"), expire_after=DAY))
    store.replicate(log, T0 + timedelta(days=1))
    assert store.store.head(key("expiring")).expiry.on == day + timedelta(days=1)  # type: ignore[union-attr]
    report = await expire_topic(TOPIC, store, log, day)
    assert report.expired == 0
    assert not report.purged
    # An expired head looked up while its new append waits in Kafka.
    store2, log2 = world()
    log2.add(lambda o: append_record(o, [3], key("expiring"), expire_after=DAY))
    report2 = await expire_topic(TOPIC, store2, log2, day)
    assert report2.expired == 1
    assert report2.skipped == {Skip.APPENDED: [key("expiring")]}
    assert not report2.purged


async def test_an_unreadable_record_in_the_tail_leaves_the_journal_to_an_operator() -> None:
    store, log = world()
    log.add(lambda o: broken(append_record(o, [3], key("expiring")), header=b"{not json"))
    report = await expire_topic(TOPIC, store, log, TODAY + timedelta(days=1))
    assert report.skipped == {Skip.UNREADABLE: [key("expiring")]}
    assert not report.purged


async def test_purges_per_run_are_bounded_and_the_rest_waits() -> None:
    store, log = MemoryStore(), MemoryLog()
    for n in range(5):
        log.add(partial(_append, key=key(f"j{n}")))
    store.replicate(log)
    day = TODAY + timedelta(days=1)
    first = await expire_topic(TOPIC, store, log, day, max_purges=2)
    assert [k.id for k, _ in first.purged] == ["j0", "j1"]
    assert [k.id for k in first.deferred] == ["j2", "j3", "j4"]
    store.replicate(log)
    second = await expire_topic(TOPIC, store, log, day, max_purges=10)
    assert [k.id for k, _ in second.purged] == ["j2", "j3", "j4"]


async def test_only_the_lookback_window_is_searched_and_a_dry_run_purges_nothing() -> None:
    store, log = world()
    late = TODAY + timedelta(days=4)  # `expiring` expired on day 1, `later` expires on day 7
    assert (await expire_topic(TOPIC, store, log, late, lookback_days=3)).expired == 0
    dry = await expire_topic(TOPIC, store, log, late, lookback_days=4, dry_run=True)
    assert [k for k, _ in dry.purged] == [key("expiring")]
    assert len(log.log) == 3
    assert "would purge" in dry.summary()


async def test_an_append_landing_while_its_journal_is_purged_is_reported() -> None:
    store, log = world()
    log.before_purge = lambda k: log.add(lambda o: append_record(o, [3], k, expire_after=DAY))
    report = await expire_topic(TOPIC, store, log, TODAY + timedelta(days=1))
    assert len(report.races) == 1
    race = report.races[0]
    assert race.key == key("expiring")
    assert race.append.offset == 3
    assert race.purge.offset == 4


def test_the_rule() -> None:
    store, _ = world()
    head = store.store.head(key("expiring"))
    day = TODAY + timedelta(days=1)
    assert verdict(None, [], day) is Skip.GONE
    assert verdict(head, [], TODAY) is Skip.NOT_EXPIRED
    assert verdict(store.store.head(key("forever")), [], day) is Skip.NOT_EXPIRED
    assert verdict(head, [], day) is None
    assert verdict(head, [], day + timedelta(days=100)) is None
