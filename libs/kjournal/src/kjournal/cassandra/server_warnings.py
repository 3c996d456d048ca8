"""`throttle_server_warnings()`: the driver's "Server warning: …" log lines, at most one per kind
per interval.

Cassandra attaches a warning to a response for, e.g., every batch over `batch_size_warn_threshold`
(5 KiB by default; the replicator's batches are up to 40 KiB by design), and the driver logs each
one at WARNING on `cassandra.protocol`. Worth one line now and then, not one per request.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable

__all__ = ["ServerWarningThrottle", "throttle_server_warnings"]

_DRIVER_LOGGER = "cassandra.protocol"
_NUMBERS = re.compile(r"\d+(\.\d+)?")


class ServerWarningThrottle(logging.Filter):
    """Lets a server warning through once per `interval_s` for each kind (the message with its
    numbers blanked out) and counts the ones it held back into the next line of that kind."""

    def __init__(
        self, interval_s: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Server warning"):
            return True
        kind = _NUMBERS.sub("#", record.getMessage())
        now = self._clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval_s:
                self._held[kind] = self._held.get(kind, 0) + 1
                return False
            self._last[kind] = now
            held = self._held.pop(kind, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like it since the last one logged)"
        return True


def throttle_server_warnings(interval_s: float = 300.0) -> None:
    """Install a `ServerWarningThrottle` on the driver's logger, once per process."""
    logger = logging.getLogger(_DRIVER_LOGGER)
    if not any(isinstance(f, ServerWarningThrottle) for f in logger.filters):
        logger.addFilter(ServerWarningThrottle(interval_s))
