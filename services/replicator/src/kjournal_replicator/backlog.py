"""Whether replication keeps up, said once when it stops keeping up and once when it has caught up.

Lag alone does not say it: under a steady load a few records are always on their way. A record
is *overdue* when Kafka held it `patience` lag measurements ago and Cassandra still does not: the
end offsets of that measurement, against pointer2 now. The replicator is behind while any record
is overdue; an idle topic, or a busy one replicated within the window, never is.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from kjournal.model.replication import TopicReplication
from kjournal.model.replication import replication_lag

__all__ = ["Backlog", "BacklogNews"]


@dataclass(frozen=True, slots=True)
class BacklogNews:
    level: int
    message: str


class Backlog:
    def __init__(self, patience: int, interval_s: float) -> None:
        if patience < 1:
            raise ValueError("patience must be at least 1 measurement")
        self._ends: deque[dict[tuple[str, int], int]] = deque(maxlen=patience)
        self._window_s = patience * interval_s
        self._behind_since: float | None = None

    def observe(self, statuses: Sequence[TopicReplication], now: float) -> BacklogNews | None:
        """One lag measurement taken at `now` (monotonic seconds); news when that changes
        whether the replicator is behind."""
        overdue = self._overdue(statuses)
        self._ends.append(
            {
                (status.topic, partition.partition): partition.end_offset
                for status in statuses
                for partition in status.partitions
            }
        )
        if overdue is None:
            return None
        if overdue and self._behind_since is None:
            self._behind_since = now
            waiting = sum(status.lag for status in statuses)
            return BacklogNews(
                logging.WARNING,
                f"replication is falling behind: {overdue} records in Kafka for "
                f"{self._window_s:g} s or more are not in Cassandra yet ({waiting} records "
                "waiting in all; metric kjournal_replication_lag_records)",
            )
        if not overdue and self._behind_since is not None:
            behind_s = now - self._behind_since
            self._behind_since = None
            return BacklogNews(
                logging.INFO,
                f"replication has caught up: no record waits {self._window_s:g} s for "
                f"Cassandra any more (it was behind for {behind_s:.0f} s)",
            )
        return None

    def _overdue(self, statuses: Sequence[TopicReplication]) -> int | None:
        """Records that were in Kafka `patience` measurements ago and are not replicated; None
        until there have been that many."""
        if len(self._ends) < (self._ends.maxlen or 0):
            return None
        then = self._ends[0]
        return sum(
            replication_lag(partition.beginning_offset, end, partition.pointer2)
            for status in statuses
            for partition in status.partitions
            if (end := then.get((status.topic, partition.partition))) is not None
        )
