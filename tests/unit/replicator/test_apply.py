"""The executor side without Spark: grouping, ordering, retries and reports."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence

import pytest
from kjournal.errors import CassandraUnavailable
from kjournal.errors import SliceTimeout
from kjournal.fold.plan import Step
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import Key
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import mark_record
from kjournal.wire.record import ConsumedRecord
from kjournal_replicator.apply import apply_records
from kjournal_replicator.apply import to_record
from kjournal_replicator.settings import ApplySettings

KEY1 = Key(TOPIC, "id1")
KEY2 = Key(TOPIC, "id2")
FAST = ApplySettings(retry_backoff_s=0)


def on_partition(record: ConsumedRecord, partition: int) -> ConsumedRecord:
    return dataclasses.replace(record, partition=partition)


def test_partitions_are_applied_separately_in_offset_order() -> None:
    store = InMemoryReplicatedStore()
    records = [
        on_partition(append_record(1, [2], KEY2), 1),
        append_record(1, [2, 3], KEY1),
        on_partition(append_record(0, [1], KEY2), 1),
        append_record(0, [1], KEY1),
    ]
    reports = list(apply_records(records, store, FAST))
    assert [(r.result.partition, r.first_offset, r.last_offset) for r in reports] == [
        (0, 0, 1),
        (1, 0, 1),
    ]
    assert [e.seq_nr for e in store.events(KEY1)] == [1, 2, 3]
    assert [e.seq_nr for e in store.events(KEY2)] == [1, 2]
    assert store.pointer2(TOPIC, 0) == 1
    assert store.pointer2(TOPIC, 1) == 1
    assert all(len(r.latencies) == 2 for r in reports)
    assert reports[0].metrics.counters  # the core's metrics come back with the report


def test_only_records_above_pointer2_have_a_latency() -> None:
    store = InMemoryReplicatedStore()
    list(apply_records([append_record(0, [1], KEY1)], store, FAST))
    [report] = apply_records([append_record(0, [1], KEY1), mark_record(1, KEY1)], store, FAST)
    assert report.result.pointer2 == 1
    assert len(report.latencies) == 1


class Flaky(InMemoryReplicatedStore):
    """Fails the first `failures` writes as an unreachable Cassandra would."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        if self.failures:
            self.failures -= 1
            raise CassandraUnavailable("no host available")
        return super().write(journals)


def test_cassandra_errors_are_retried_inside_the_task() -> None:
    store = Flaky(failures=2)
    [report] = apply_records([append_record(0, [1], KEY1)], store, FAST)
    assert report.attempts == 3
    assert [e.seq_nr for e in store.events(KEY1)] == [1]


def test_the_task_fails_once_retries_are_exhausted() -> None:
    store = Flaky(failures=3)
    with pytest.raises(CassandraUnavailable):
        list(apply_records([append_record(0, [1], KEY1)], store, FAST))
    assert store.pointer2(TOPIC, 0) is None


def test_rows_from_spark_become_consumed_records() -> None:
    now = int(time.time() * 1000)
    row = ("t", 3, 7, bytearray(b"id"), None, [("journal.action", bytearray(b"{}"))], now)
    assert to_record(row) == ConsumedRecord(
        "t", 3, 7, b"id", None, [("journal.action", b"{}")], now
    )


class Wedged(InMemoryReplicatedStore):
    """A write that never returns (until released), as a driver call stuck on a dead connection."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        self.release.wait(10)
        return super().write(journals)


def test_a_wedged_slice_fails_the_task_after_the_timeout() -> None:
    store = Wedged()
    settings = ApplySettings(retry_backoff_s=0, slice_timeout_s=0.2)
    started = time.monotonic()
    try:
        with pytest.raises(SliceTimeout, match=f"{TOPIC}:0 took more than 0.2 s"):
            list(apply_records([append_record(0, [1], KEY1)], store, settings))
        assert time.monotonic() - started < 5
    finally:
        store.release.set()
