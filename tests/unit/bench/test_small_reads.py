"""bench.small_reads: when the reader's replication status shows the topic replicated, the
segments a journal's rows are in, and the percentiles it prints; bench/_replicator.py's
settings."""

from __future__ import annotations

from pathlib import Path

from kjournal.model.replication import PartitionReplication
from kjournal.model.replication import TopicReplication

from bench._replicator import ReplicatorTarget
from bench._replicator import replicator_env
from bench.small_reads import caught_up
from bench.small_reads import segments_of
from bench.small_reads import summarize


def _status(*pointer2: int | None, end: int = 5) -> TopicReplication:
    return TopicReplication(
        "journal_bench",
        tuple(PartitionReplication(p, 0, end, offset) for p, offset in enumerate(pointer2)),
    )


def test_caught_up_needs_no_lag_and_pointer2_past_every_append() -> None:
    assert caught_up(_status(4, 4), {0: 5, 1: 5})
    assert not caught_up(_status(4, 3), {0: 5, 1: 5})  # lag 1
    assert not caught_up(_status(4, None), {0: 5, 1: 5})  # nothing replicated yet


def test_appends_the_status_does_not_show_yet_are_not_caught_up() -> None:
    # The status was asked of an end offset below the last append's (no lag as it saw it).
    assert not caught_up(_status(2, 2, end=3), {0: 5})
    assert caught_up(_status(4, None, end=5), {0: 5}) is False  # partition 1 lags
    empty = TopicReplication(
        "journal_bench", (PartitionReplication(0, 0, 5, 4), PartitionReplication(1, 0, 0, None))
    )
    assert caught_up(empty, {0: 5, 1: 0})  # nothing was appended to partition 1


def test_a_journal_s_rows_are_in_the_segments_of_its_seq_nrs() -> None:
    assert list(segments_of(10, 10_000)) == [0]
    assert list(segments_of(10, 4)) == [0, 1, 2]


def test_the_summary_orders_the_samples() -> None:
    samples = [float(n) for n in range(100, 0, -1)]
    summary = summarize(samples)
    assert (summary.p50, summary.p90, summary.p99, summary.max) == (51.0, 91.0, 100.0, 100.0)
    assert summary.count == 100


def test_the_replicator_replicates_the_bench_topic_alone(tmp_path: Path) -> None:
    target = ReplicatorTarget(
        "127.0.0.1:59092", "127.0.0.1", 59042, "kjbench_x", "journal_bench.a", tmp_path / "jars"
    )
    env = replicator_env(target, tmp_path, 40000)
    assert env["KJOURNAL_TOPICS__PATTERN"] == r"journal_bench\.a"
    assert env["KJOURNAL_CASSANDRA__KEYSPACE"] == "kjbench_x"
    assert env["KJOURNAL_CASSANDRA__PORT"] == "59042"
    assert env["KJOURNAL_KAFKA__BOOTSTRAP_SERVERS"] == "127.0.0.1:59092"
    assert env["KJOURNAL_SPARK__CHECKPOINT_LOCATION"] == str(tmp_path / "checkpoint")
    assert env["KJOURNAL_SPARK__JARS_DIR"] == str(tmp_path / "jars")
    assert env["KJOURNAL_HTTP__PORT"] == "40000"
