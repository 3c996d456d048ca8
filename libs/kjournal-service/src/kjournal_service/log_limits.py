"""Client libraries' log lines, at most one per kind per interval.

While a broker is down, aiokafka logs every failed connection attempt: ~22 000 lines in four
minutes from one writer. `Throttle` lets the first line of each kind (logger, level and message
template) through, drops the repeats for `interval_s`, and adds to the next line of that kind how
many were dropped. The dependency watch (dependency_watch.py) says, once, when a dependency goes
down and when it comes back. The OpenTelemetry exporter's lines are throttled too: a collector
that does not answer is worth a line a minute, not one per batch.
"""

from __future__ import annotations

import logging
import threading
import time

__all__ = ["THROTTLED_LOGGERS", "Throttle"]

THROTTLED_LOGGERS = ("aiokafka", "kafka", "cassandra", "opentelemetry")


class Throttle(logging.Filter):
    """A handler's filter: lines of the `loggers` (and their children) are throttled, others
    pass. (A logger's own filter would miss its children's lines.)"""

    def __init__(self, interval_s: float = 60.0, loggers: tuple[str, ...] = THROTTLED_LOGGERS):
        super().__init__()
        self.interval_s = interval_s
        self._prefixes = loggers
        self._dotted = tuple(f"{name}." for name in loggers)
        self._lock = threading.Lock()
        # kind → (time its last line went out, lines dropped since)
        self._kinds: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if name not in self._prefixes and not name.startswith(self._dotted):
            return True
        kind = (name, record.levelno, str(record.msg))
        now = time.monotonic()
        with self._lock:
            last, dropped = self._kinds.get(kind, (None, 0))
            if last is not None and now - last < self.interval_s:
                self._kinds[kind] = (last, dropped + 1)
                return False
            self._kinds[kind] = (now, 0)
        if dropped:
            record.msg = (
                f"{record.msg} (and {dropped} more like it in the last {self.interval_s:g} s)"
            )
        return True
