"""The replicator says once that it is behind, and once that it has caught up."""

from __future__ import annotations

import logging

import pytest
from kjournal.model.replication import PartitionReplication
from kjournal.model.replication import TopicReplication
from kjournal_replicator.backlog import Backlog


def _status(end: int, pointer2: int | None) -> list[TopicReplication]:
    return [TopicReplication("journal", (PartitionReplication(0, 0, end, pointer2),))]


def _run(backlog: Backlog, measurements: list[tuple[int, int | None]]) -> list[tuple[int, str]]:
    news = []
    for second, (end, pointer2) in enumerate(measurements):
        if said := backlog.observe(_status(end, pointer2), float(second * 10)):
            news.append((said.level, said.message))
    return news


def test_an_idle_topic_is_never_behind() -> None:
    assert _run(Backlog(3, 10), [(0, None)] * 10 + [(5, 4)] * 10) == []


def test_a_steady_load_replicated_within_the_window_is_never_behind() -> None:
    # 100 records a measurement, each replicated by the next: the lag is never zero
    measurements = [(100 * n, 100 * n - 101 if n > 1 else None) for n in range(1, 30)]
    assert all(end > (pointer2 or -1) + 1 for end, pointer2 in measurements)
    assert _run(Backlog(3, 10), measurements) == []


def test_records_waiting_past_the_window_are_said_once_and_so_is_the_catch_up() -> None:
    stalled: list[tuple[int, int | None]] = [(100, None)] * 3
    stalled += [(100 + 10 * n, None) for n in range(1, 6)]
    caught_up: list[tuple[int, int | None]] = [(150, 149)] * 3
    news = _run(Backlog(3, 10), stalled + caught_up)
    assert [level for level, _ in news] == [logging.WARNING, logging.INFO]
    warning, info = (message for _, message in news)
    assert warning.startswith("replication is falling behind: 100 records in Kafka for 30 s")
    assert "(110 records waiting in all" in warning  # the 100 overdue and 10 since
    assert info.startswith("replication has caught up")
    assert "behind for 50 s" in info


def test_nothing_is_said_before_the_window_has_passed_once() -> None:
    assert _run(Backlog(3, 10), [(100, None)] * 3) == []


def test_patience_is_at_least_one_measurement() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Backlog(0, 10)
