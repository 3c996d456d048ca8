"""Make `importlib.invalidate_caches()` cheap again in PySpark's Python workers (Python 3.11).

PySpark's worker calls `importlib.invalidate_caches()` before every task. On Python 3.10 and 3.11
that makes every `zipimporter` re-read its archive's whole directory at once, and a worker has
sixteen of them (pyspark.zip, the py4j zip and the spark-core jar Spark puts on its PYTHONPATH,
one importer per package imported from them): ~90 ms of CPU per task here, two thirds of what the
replicator's Python workers did at 1 000 events/s. CPython 3.12 made the invalidation lazy
(python/cpython#103200); on older versions `install` makes it re-read an archive only when the
file changed (modification time or size), which is all the invalidation is for.
"""

from __future__ import annotations

import os
import sys
import threading
import zipimport
from collections.abc import Callable
from typing import Any

__all__ = ["install"]

_STAMP = "_kjournal_read_at"  # (mtime_ns, size) of the archive when this importer last read it
_lock = threading.Lock()
_original: Callable[[Any], None] | None = None


def install() -> None:
    """Idempotent; does nothing where the standard library is already lazy (3.12+)."""
    global _original
    if sys.version_info >= (3, 12):
        return
    with _lock:
        if _original is None:
            _original = zipimport.zipimporter.invalidate_caches
            zipimport.zipimporter.invalidate_caches = _invalidate_if_changed  # type: ignore[assignment,method-assign]


def _invalidate_if_changed(importer: zipimport.zipimporter) -> None:
    try:
        stat = os.stat(importer.archive)
    except OSError:
        stamp = None
    else:
        stamp = (stat.st_mtime_ns, stat.st_size)
    if stamp is not None and getattr(importer, _STAMP, None) == stamp:
        return
    assert _original is not None
    _original(importer)
    setattr(importer, _STAMP, stamp)
