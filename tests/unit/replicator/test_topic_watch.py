"""TopicWatch and the micro-batch check: a deleted topic is one log line and stops nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Sequence
from typing import cast

import pytest
from kjournal.cassandra.settings import CassandraSettings
from kjournal.errors import MicroBatchError
from kjournal.metrics import RecordingMetrics
from kjournal_replicator.apply import ApplyTask
from kjournal_replicator.apply import SliceReport
from kjournal_replicator.micro_batch import MicroBatchHandler
from kjournal_replicator.ranges import OffsetRange
from kjournal_replicator.settings import ApplySettings
from kjournal_replicator.topic_watch import TopicWatch
from pyspark.sql import DataFrame


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("kjournal_replicator")]


def test_a_deletion_is_one_line_whoever_notices_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    watch = TopicWatch(["journal_a", "journal_b"])
    watch.deleted("journal_b")  # a micro-batch noticed first
    watch.now(["journal_a"])  # then the lag monitor
    watch.now(["journal_a"])
    watch.deleted("journal_b")
    assert _lines(caplog) == [
        "topic journal_b was deleted: its replication stops (pointer2 rows remain)"
    ]


def test_the_first_listing_is_the_baseline(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    watch = TopicWatch()
    watch.now(["journal_a", "journal_b"])
    assert _lines(caplog) == []
    watch.now(["journal_a"])
    assert len(_lines(caplog)) == 1


def test_a_topic_created_again_under_a_deleted_name_is_new(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    watch = TopicWatch(["journal_a"])
    watch.now([])
    watch.now(["journal_a"])
    watch.now([])
    assert _lines(caplog) == [
        "topic journal_a was deleted: its replication stops (pointer2 rows remain)",
        "new topic journal_a matches: replicating it from its beginning",
        "topic journal_a was deleted: its replication stops (pointer2 rows remain)",
    ]


def _handler(
    topics_now: list[str],
    watch: TopicWatch,
    read_ranges: Callable[[Sequence[OffsetRange]], DataFrame] | None = None,
) -> MicroBatchHandler:
    return MicroBatchHandler(
        ApplyTask(CassandraSettings(), ApplySettings()),
        lambda topic, partition: None,
        RecordingMetrics(),
        max_tasks=2,
        topics_now=lambda: topics_now,
        watch=watch,
        read_ranges=read_ranges,
    )


def test_planned_partitions_of_a_deleted_topic_that_brought_nothing_are_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = TopicWatch(["journal_a", "journal_b"])
    handler = _handler(["journal_a"], watch)
    planned = [OffsetRange("journal_b", 0, 10, 20)]
    handler.check_complete(planned, [])  # no error: the topic is gone
    assert watch.known() == {"journal_a"}
    assert len(_lines(caplog)) == 1


def test_planned_partitions_of_a_topic_still_there_that_brought_nothing_fail_the_batch() -> None:
    handler = _handler(["journal_a"], TopicWatch(["journal_a"]))
    with pytest.raises(MicroBatchError, match="no records came back"):
        handler.check_complete([OffsetRange("journal_a", 0, 10, 20)], [])


class _Reads:
    """The micro-batch's applies: the planned batch fails its read, a batch read of ranges works."""

    def __init__(self) -> None:
        self.applied: list[tuple[object, list[OffsetRange]]] = []

    def apply(self, frame: object, ranges: Sequence[OffsetRange]) -> list[SliceReport]:
        self.applied.append((frame, list(ranges)))
        if frame == "planned batch":
            raise RuntimeError("Cannot fetch record for offset 10 in 30000 milliseconds")
        return []


def _reading_handler(
    topics_now: list[str], watch: TopicWatch, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> MicroBatchHandler:
    handler = _handler(
        topics_now,
        watch,
        lambda ranges: cast(DataFrame, ("ranges read again", tuple(ranges))),
    )
    monkeypatch.setattr(handler, "_apply", reads.apply)
    return handler


def test_a_read_failed_under_a_deleted_topic_applies_the_other_topics_again(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    watch = TopicWatch(["journal_a", "journal_b"])
    reads = _Reads()
    handler = _reading_handler(["journal_a"], watch, reads, monkeypatch)
    kept = [OffsetRange("journal_a", 0, 5, 9), OffsetRange("journal_a", 1, 0, 3)]
    planned = [*kept, OffsetRange("journal_b", 0, 10, 20)]

    handler._apply_without_vanished(cast(DataFrame, "planned batch"), 7, planned)

    assert reads.applied == [
        ("planned batch", planned),
        (("ranges read again", tuple(kept)), kept),
    ]
    assert watch.known() == {"journal_a"}
    deleted = [line for line in _lines(caplog) if "journal_b" in line]
    assert deleted == ["topic journal_b was deleted: its replication stops (pointer2 rows remain)"]


def test_a_read_failed_with_every_planned_topic_still_there_fails_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads = _Reads()
    handler = _reading_handler(["journal_a"], TopicWatch(["journal_a"]), reads, monkeypatch)
    with pytest.raises(RuntimeError, match="Cannot fetch record"):
        handler._apply_without_vanished(
            cast(DataFrame, "planned batch"), 7, [OffsetRange("journal_a", 0, 5, 9)]
        )
    assert len(reads.applied) == 1
