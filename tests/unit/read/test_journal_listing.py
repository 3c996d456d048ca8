"""The follower's listing of a topic's journals (read/follower.py, `_list_journals`) when Cassandra
fails: retried after Cassandra's own failures, given up (never failing the folds) after any other.
What the listing is for, and why it is exact, is tested in test_partition_fold.py and
tests/integration/services/test_known_journals.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from types import SimpleNamespace
from typing import Any

import pytest
from kjournal.errors import Unavailable
from kjournal.metrics import RecordingMetrics
from kjournal.metrics.catalogue import FOLD_LISTINGS
from kjournal.read import follower as follower_module
from kjournal.read.known import KnownJournals

TOPIC = "journal"
END = 7


class _Listing:
    """An eventual reader whose `ids` fails with each of `failures` in turn, then lists `ids`."""

    def __init__(self, failures: list[Exception], ids: list[str]) -> None:
        self.failures = failures
        self.ids = ids
        self.calls = 0

    def list(self, topic: str) -> AsyncGenerator[str, None]:
        async def ids() -> AsyncGenerator[str, None]:
            self.calls += 1
            if self.failures:
                yield self.ids[0]  # partway through a listing, as a failing page would be
                raise self.failures.pop(0)
            for id_ in self.ids:
                yield id_

        return ids()


class _Log:
    """A Kafka source whose one partition ends at `END`."""

    async def end_offsets(self, topic: str, partitions: list[int]) -> dict[int, int]:
        assert partitions == [0]
        return {0: END}


def _folds(listing: _Listing, metrics: RecordingMetrics) -> Any:
    """A topic's folds whose owner has only what the listing uses: the eventual reader's `ids`
    and the metrics."""
    owner = SimpleNamespace(
        eventual=SimpleNamespace(ids=listing.list), source=_Log(), metrics=metrics
    )
    return follower_module._TopicFolds(TOPIC, owner)  # type: ignore[arg-type]


def test_a_listing_cassandra_failed_is_made_again_and_completes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(follower_module, "_LISTING_BACKOFF_MIN_S", 0.0)
    listing = _Listing([Unavailable("down"), Unavailable("still down")], ["a", "b"])
    metrics = RecordingMetrics()
    known = KnownJournals()
    asyncio.run(_folds(listing, metrics)._list_journals(known, 1))
    assert listing.calls == 3
    assert known.listed
    assert not known.absent("a", 0, END)
    assert not known.absent("b", 0, END)
    assert known.absent("c", 0, END)
    assert not known.absent("c", 0, END - 1)  # a purge may have hidden its head below the end
    assert metrics.counters[FOLD_LISTINGS.name] == {(("topic", TOPIC),): 1.0}


def test_a_listing_failing_otherwise_is_given_up_and_leaves_every_journal_to_cassandra() -> None:
    listing = _Listing([RuntimeError("a bug")], ["a", "b"])
    metrics = RecordingMetrics()
    known = KnownJournals()
    asyncio.run(_folds(listing, metrics)._list_journals(known, 1))  # returns: the folds go on
    assert listing.calls == 1
    assert not known.listed
    assert not known.absent("c", 0, END)  # no journal is taken for new
    assert FOLD_LISTINGS.name not in metrics.counters
