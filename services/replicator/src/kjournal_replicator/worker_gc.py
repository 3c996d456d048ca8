"""Garbage collector settings for the replicating Python workers.

Applying a slice allocates millions of short-lived containers (decoded events, rows, bound
values) and almost no reference cycles, so with CPython's default first-generation threshold of
700 allocations the cyclic collector ran thousands of times per slice, scanning young objects
that were about to be freed anyway. A threshold of 50 000 (`ApplySettings.gc_threshold`) cut the
replicating process's CPU by 10-15 % in `bench.replicate_apply` (2.37-2.41 s → 1.99-2.16 s for
100 000 events), for a few megabytes more of garbage between collections.
"""

from __future__ import annotations

import gc

__all__ = ["tune"]


def tune(threshold: int) -> None:
    """Set the first generation's threshold; 0 leaves Python's as it is."""
    if threshold > 0:
        _, second, third = gc.get_threshold()
        gc.set_threshold(threshold, second, third)
