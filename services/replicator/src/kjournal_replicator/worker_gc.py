"""Garbage collector settings for the replicating Python workers.

Applying a slice allocates a great many short-lived containers (decoded events, rows, bound
values) that reference counting frees, so with CPython's default first-generation threshold of
700 allocations the cyclic collector ran over and over per slice, scanning young objects that
were about to be freed anyway. A threshold of 50 000 (`ApplySettings.gc_threshold`) cut the
replicating processes' CPU by 30-35 % in `bench.replicate_apply --processes 2` (10 000 journals
× 10 events: 4.0-4.1 → 2.6 s of CPU, 30 000 → 37 000-40 000 events/s; one journal × 100 000:
2.5-2.8 → 1.8-1.9 s), for a few megabytes more of garbage between collections.
"""

from __future__ import annotations

import gc

__all__ = ["DEFAULT_THRESHOLD", "tune"]

DEFAULT_THRESHOLD = 50_000


def tune(threshold: int) -> None:
    """Set the first generation's threshold; 0 leaves Python's as it is."""
    if threshold > 0:
        _, second, third = gc.get_threshold()
        gc.set_threshold(threshold, second, third)
