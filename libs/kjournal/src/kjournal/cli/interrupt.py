"""Ctrl-C as a request to stop, for commands that run until the user stops them (`tail`).

A KeyboardInterrupt raised at an arbitrary point can land inside the HTTP client's connection
pool while it holds its (non-reentrant) lock; unwinding then closes the pool, which waits for
that lock forever. So the first SIGINT only sets an event the command checks between requests,
and the next one raises KeyboardInterrupt as usual, for a request that does not return.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["stop_on_interrupt"]


@contextmanager
def stop_on_interrupt() -> Iterator[threading.Event]:
    """An event set by the first SIGINT while the block runs (main thread only)."""
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    signal.signal(signal.SIGINT, request_stop)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)
