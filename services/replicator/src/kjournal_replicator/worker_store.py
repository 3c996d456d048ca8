"""The Cassandra store of this PySpark worker process.

A worker process is reused for many tasks (spark.python.worker.reuse), so the Cassandra session
and the store (with its prepared statements) are made once per process and per settings, on
first use, and never in the parent PySpark forks workers from (a driver connection does not
survive a fork). `WORKER_STORE` is the process's one; it closes its session at the process's exit.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kjournal.cassandra.server_warnings import throttle_server_warnings
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.writer import CassandraReplicatedStore

from kjournal_replicator import worker_gc
from kjournal_replicator.settings import ApplySettings

__all__ = ["WORKER_STORE", "WorkerStore"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Open:
    settings: tuple[str, str]  # the settings it was made with, as JSON
    store: CassandraReplicatedStore
    close: Callable[[], None]


class WorkerStore:
    """A store made on first use and again when the settings change (closing the one before)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: _Open | None = None

    def get(
        self, cassandra: CassandraSettings, settings: ApplySettings
    ) -> CassandraReplicatedStore:
        wanted = (cassandra.model_dump_json(), settings.model_dump_json())
        with self._lock:
            if self._open is not None and self._open.settings == wanted:
                return self._open.store
            if self._open is not None:
                self._open.close()
                self._open = None
            throttle_server_warnings()
            session = connect(cassandra)
            store = CassandraReplicatedStore(
                session,
                cassandra.names,
                segment_size=cassandra.segment_size,
                concurrency=settings.concurrency,
                java_version=cassandra.java_version,
            )
            self._open = _Open(wanted, store, session.cluster.shutdown)
            worker_gc.tune(settings.gc_threshold)
            log.info("connected to Cassandra %s for replication", list(cassandra.contact_points))
            return store

    def forget(self) -> None:
        """Drop the session without closing it (closing may block on the fault that makes us
        drop it); the next `get` connects again."""
        with self._lock:
            self._open = None

    def close(self) -> None:
        with self._lock:
            if self._open is not None:
                self._open.close()
                self._open = None


WORKER_STORE = WorkerStore()
atexit.register(WORKER_STORE.close)
