"""`KnownJournals`: the ids of a topic's journals that may exist, so that the folds can start a
journal that cannot exist without asking Cassandra for its head.

A fold meeting a journal it does not know reads the journal's head from Cassandra
(read/bootstrap.py). For a journal that never existed, the usual case for an application creating
aggregates, that read finds nothing, and it costs more than the rest of the append's outcome
together (docs/performance.md). So each followed topic keeps the ids of every journal that may
exist: those with a head in Cassandra, listed once after the folds' pointer2 was read, and every
journal a fold met since. A journal in neither, first met at or after its partition's log end as
the listing completed, has no head and no record from pointer2 up to where the fold met it
(docs/concurrency.md, "Journals the fold knows are new"): it starts empty. Below that end, a purge
replicated while the listing ran may have hidden a head the journal had, so only Cassandra tells.

The ids are kept in Bloom filters (rbloom): a few bytes per journal, and a false positive only
sends a journal to Cassandra as before. When more ids arrive than the filters were sized for, a
filter twice as large is added, so the false positive rate stays near `FALSE_POSITIVES`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping

from rbloom import Bloom

__all__ = ["FALSE_POSITIVES", "KnownJournals"]

FALSE_POSITIVES = 0.01
_FIRST_CAPACITY = 100_000


class KnownJournals:
    """The ids that may exist in one topic; `absent` answers only once the listing is complete."""

    def __init__(
        self, capacity: int = _FIRST_CAPACITY, *, hash_func: Callable[[str], int] | None = None
    ) -> None:
        # Python's own hash by default: the fastest, and salted per process, which does not
        # matter for filters that live and die with it. A test that needs the same false
        # positives in every run gives a hash of its own (rbloom: a signed 128-bit int).
        self._hash_func = hash_func
        self._filters = [Bloom(capacity, FALSE_POSITIVES, hash_func)]
        self._capacity = capacity  # of the newest filter
        self._added = 0  # ids added to the newest filter
        # Each partition's log end, read once the listing is complete: None until then.
        self._ends: dict[int, int] | None = None

    def add(self, id_: str) -> None:
        if self.may_exist(id_):
            return  # met again, or listed and met: room is kept for new ids
        if self._added >= self._capacity:
            self._capacity *= 2
            self._filters.append(Bloom(self._capacity, FALSE_POSITIVES, self._hash_func))
            self._added = 0
        self._filters[-1].add(id_)
        self._added += 1

    def may_exist(self, id_: str) -> bool:
        return any(id_ in ids for ids in self._filters)

    def complete(self, ends: Mapping[int, int]) -> None:
        """Every head the listing read is added; `ends` is each partition's log end, read after
        the last of those reads: nothing at or after it was replicated while the listing ran."""
        self._ends = dict(ends)

    @property
    def listed(self) -> bool:
        return self._ends is not None

    def absent(self, id_: str, partition: int, offset: int) -> bool:
        """Whether the journal, first met at `offset` of `partition`, surely had nothing before
        it: no head as the listing began and no record since. False until the listing is
        complete, and below the partition's end then, where a purge the replicator applied
        while the listing ran may have removed the head the listing looked for."""
        if self._ends is None or offset < self._ends.get(partition, 0):
            return False
        return not self.may_exist(id_)

    @property
    def size_bytes(self) -> int:
        return sum(ids.size_in_bits for ids in self._filters) // 8
