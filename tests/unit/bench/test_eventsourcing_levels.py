"""bench.eventsourcing: its `--threads` levels, the order of the backends in a round, and its
threads' common start."""

from __future__ import annotations

import argparse
import threading

import pytest

from bench.eventsourcing import backend_order
from bench.eventsourcing import in_threads
from bench.eventsourcing import parse_levels
from bench.eventsourcing import ratio


def test_levels_are_parsed_in_order_each_once() -> None:
    assert parse_levels("1,8") == [1, 8]
    assert parse_levels(" 8, 1 ,8,") == [8, 1]
    assert parse_levels("4") == [4]


@pytest.mark.parametrize("text", ["", ",", "0", "-2", "two", "1,x"])
def test_a_level_that_is_no_thread_count_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_levels(text)


def test_the_first_backend_moves_on_each_round() -> None:
    names = ["kjournal", "PostgreSQL", "SQLite"]
    assert [backend_order(names, n) for n in range(4)] == [
        ["kjournal", "PostgreSQL", "SQLite"],
        ["PostgreSQL", "SQLite", "kjournal"],
        ["SQLite", "kjournal", "PostgreSQL"],
        ["kjournal", "PostgreSQL", "SQLite"],
    ]


def test_a_ratio_to_nothing_is_not_a_number() -> None:
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(1.0, 0.0) != ratio(1.0, 0.0)  # nan


def test_every_thread_runs_once_and_a_failure_is_raised() -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def work(index: int) -> None:
        with lock:
            seen.append(index)

    assert in_threads(4, work) >= 0
    assert sorted(seen) == [0, 1, 2, 3]

    def fail(index: int) -> None:
        if index == 2:
            raise ValueError("thread 2")

    with pytest.raises(ValueError, match="thread 2"):
        in_threads(3, fail)
