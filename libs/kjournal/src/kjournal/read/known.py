"""`KnownJournals`: the ids of a topic's journals that may exist, so that the folds can start a
journal that cannot exist without asking Cassandra for its head.

A fold meeting a journal it does not know reads the journal's head from Cassandra
(read/bootstrap.py). For a journal that never existed, the usual case for an application creating
aggregates, that read finds nothing, and it costs more than the rest of the append's outcome
together (docs/performance.md). So each followed topic keeps the ids of every journal that may
exist: those with a head in Cassandra, listed once after the folds' pointer2 was read, and every
journal a fold met since. A journal in neither has no head and no record from pointer2 up to where
the fold met it (docs/concurrency.md, "Journals the fold knows are new"): it starts empty.

The ids are kept in Bloom filters (rbloom): a few bytes per journal, and a false positive only
sends a journal to Cassandra as before. When more ids arrive than the filters were sized for, a
filter twice as large is added, so the false positive rate stays near `FALSE_POSITIVES`.
"""

from __future__ import annotations

from rbloom import Bloom

__all__ = ["FALSE_POSITIVES", "KnownJournals"]

FALSE_POSITIVES = 0.01
_FIRST_CAPACITY = 100_000


class KnownJournals:
    """The ids that may exist in one topic; `absent` answers only once the listing is complete."""

    def __init__(self, capacity: int = _FIRST_CAPACITY) -> None:
        self._filters = [Bloom(capacity, FALSE_POSITIVES)]
        self._capacity = capacity  # of the newest filter
        self._added = 0  # ids added to the newest filter
        self.listed = False  # every head Cassandra held when the listing began is added

    def add(self, id_: str) -> None:
        if self.may_exist(id_):
            return  # met again, or listed and met: room is kept for new ids
        if self._added >= self._capacity:
            self._capacity *= 2
            self._filters.append(Bloom(self._capacity, FALSE_POSITIVES))
            self._added = 0
        self._filters[-1].add(id_)
        self._added += 1

    def may_exist(self, id_: str) -> bool:
        return any(id_ in ids for ids in self._filters)

    def absent(self, id_: str) -> bool:
        """Whether the journal surely has no head and was not met: False until `listed`."""
        return self.listed and not self.may_exist(id_)

    @property
    def size_bytes(self) -> int:
        return sum(ids.size_in_bits for ids in self._filters) // 8
