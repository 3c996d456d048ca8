"""Least-recently-used order kept in an OrderedDict: the least recently used entry first, so
eviction pops from the front (`popitem(last=False)`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

__all__ = ["used"]

K = TypeVar("K")
V = TypeVar("V")


def used(entries: OrderedDict[K, V], key: K) -> V | None:
    """`key`'s entry, made the most recently used; None if there is none."""
    entry = entries.get(key)
    if entry is not None:
        entries.move_to_end(key)
    return entry
