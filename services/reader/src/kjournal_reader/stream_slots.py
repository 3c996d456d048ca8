"""`StreamSlots`: at most `max_concurrent_streams` streamed reads (events, journal ids) at once in
this process. Each holds Cassandra pages and perhaps a pooled Kafka consumer for as long as its
client keeps reading; one more is refused at once with 503 `busy` and Retry-After (the client
retries), instead of queueing without bound."""

from __future__ import annotations

from kjournal.errors import Busy
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import READER_STREAMS_IN_PROGRESS
from kjournal.metrics.catalogue import READER_STREAMS_REFUSED

__all__ = ["StreamSlot", "StreamSlots"]


class StreamSlot:
    """One taken slot; `release` gives it back (once, however often it is called)."""

    def __init__(self, owner: StreamSlots) -> None:
        self._owner = owner
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._owner._released()

    async def released(self) -> None:
        """`release` as a coroutine: a response's background task that runs on the loop (a
        plain function would be handed to a worker thread)."""
        self.release()


class StreamSlots:
    def __init__(self, limit: int, metrics: Metrics) -> None:
        self.limit = limit
        self.in_use = 0
        self._metrics = metrics

    def take(self) -> StreamSlot:
        """A slot, or Busy if all are taken."""
        if self.in_use >= self.limit:
            self._metrics.increment(READER_STREAMS_REFUSED.name, 1)
            raise Busy(f"{self.limit} streamed reads are in progress: retry later")
        self.in_use += 1
        self._metrics.set(READER_STREAMS_IN_PROGRESS.name, self.in_use)
        return StreamSlot(self)

    def _released(self) -> None:
        self.in_use -= 1
        self._metrics.set(READER_STREAMS_IN_PROGRESS.name, self.in_use)
