"""WorkerStore: one Cassandra session per worker process and per settings."""

from __future__ import annotations

from typing import Any

import pytest
from kjournal.cassandra.settings import CassandraSettings
from kjournal_replicator import worker_gc
from kjournal_replicator import worker_store
from kjournal_replicator.settings import ApplySettings
from kjournal_replicator.worker_store import WorkerStore


class Session:
    def __init__(self, sessions: list[Session]) -> None:
        self.closed = False
        sessions.append(self)
        self.cluster = self

    def shutdown(self) -> None:
        self.closed = True


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[Session]:
    """The sessions the store opens, in order (a store is its session here)."""
    opened: list[Session] = []
    monkeypatch.setattr(worker_store, "connect", lambda settings: Session(opened))
    monkeypatch.setattr(
        worker_store, "CassandraReplicatedStore", lambda session, *args, **kwargs: session
    )
    monkeypatch.setattr(worker_gc, "tune", lambda threshold: None)
    return opened


def get(store: WorkerStore, keyspace: str = "journal") -> Any:
    return store.get(CassandraSettings(keyspace=keyspace), ApplySettings())


def test_the_same_settings_get_the_same_store(sessions: list[Session]) -> None:
    store = WorkerStore()
    assert get(store) is get(store)
    assert len(sessions) == 1


def test_other_settings_close_the_store_before_and_open_another(sessions: list[Session]) -> None:
    store = WorkerStore()
    first = get(store)
    second = get(store, keyspace="other")
    assert second is not first
    assert [s.closed for s in sessions] == [True, False]


def test_a_forgotten_store_is_left_open_and_replaced(sessions: list[Session]) -> None:
    store = WorkerStore()
    first = get(store)
    store.forget()
    assert get(store) is not first
    assert [s.closed for s in sessions] == [False, False]


def test_close_closes_the_open_store_once(sessions: list[Session]) -> None:
    store = WorkerStore()
    get(store)
    store.close()
    store.close()
    assert [s.closed for s in sessions] == [True]
    get(store)
    assert len(sessions) == 2
