"""The matching topics the job knows of, and one log line when one of them is deleted or created.

The driver learns of topics at start-up (the partitions its starting offsets name), from every lag
measurement (the complete list Kafka has now), and from a micro-batch that planned partitions of a
topic that is gone. Whichever notices a deletion first logs it; the others stay quiet, so one
deletion is one line. A topic created again under a deleted name is new.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

__all__ = ["TopicWatch"]

log = logging.getLogger(__name__)


class TopicWatch:
    def __init__(self, known: Iterable[str] | None = None) -> None:
        """`known`: the topics the job starts with; None: the first `now` says which they are."""
        self._lock = threading.Lock()
        self._known = set(known) if known is not None else None
        self._reported: set[str] = set()  # deletions logged (until the name comes back)

    def now(self, topics: Iterable[str]) -> None:
        """`topics` is every matching topic Kafka has now."""
        current = set(topics)
        with self._lock:
            if self._known is None:
                self._known = current
                return
            deleted = sorted(self._known - current - self._reported)
            created = sorted(current - self._known)
            self._known = current
            self._reported = (self._reported | set(deleted)) - current
        for topic in deleted:
            _log_deleted(topic)
        for topic in created:
            log.info("new topic %s matches: replicating it from its beginning", topic)

    def deleted(self, topic: str) -> None:
        """`topic` is gone (a micro-batch found its planned partitions missing)."""
        with self._lock:
            if topic in self._reported:
                return
            self._reported.add(topic)
            if self._known is not None:
                self._known.discard(topic)
        _log_deleted(topic)

    def known(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._known or ())


def _log_deleted(topic: str) -> None:
    log.warning("topic %s was deleted: its replication stops (pointer2 rows remain)", topic)
