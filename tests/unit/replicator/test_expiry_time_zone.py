"""`CassandraSettings.expiry_time_zone`: the zone of the expiry dates the replicator writes
(kafka-journal's replicators use their JVM's default zone)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import time_zone
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ExpireAfter
from kjournal.model.head import Expiry
from kjournal.testing.records import KEY
from kjournal.testing.records import append_record
from kjournal_replicator import apply
from kjournal_replicator import zip_imports
from kjournal_replicator.apply import COLUMNS
from kjournal_replicator.apply import ApplyTask
from kjournal_replicator.settings import ApplySettings
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.worker_store import WORKER_STORE
from pydantic import ValidationError

HOUR = ExpireAfter.of(1, "hour")
# An hour after 20:30 UTC on 1 March it is 2 March in Tokyo.
EVENING_UTC = datetime(2024, 3, 1, 20, 30, tzinfo=UTC)


def _rows_of(records: Sequence[Any]) -> list[tuple[Any, ...]]:
    assert len(COLUMNS) == 7
    return [
        (r.topic, r.partition, r.offset, r.key, r.value, r.headers, r.timestamp_ms) for r in records
    ]


@pytest.mark.parametrize(
    ("zone", "on"), [("UTC", date(2024, 3, 1)), ("Asia/Tokyo", date(2024, 3, 2))]
)
def test_the_replicator_task_takes_the_zone_from_the_cassandra_settings(
    monkeypatch: pytest.MonkeyPatch, zone: str, on: date
):
    store = InMemoryReplicatedStore()

    monkeypatch.setattr(WORKER_STORE, "get", lambda cassandra, settings: store)
    monkeypatch.setattr(zip_imports, "install", lambda: None)  # a worker's import hook
    monkeypatch.setattr(apply, "worker_tracing", lambda: None)  # a worker's tracer set-up
    monkeypatch.setattr(apply, "datetime", _FrozenClock)
    task = ApplyTask(CassandraSettings(expiry_time_zone=zone), ApplySettings())

    list(task(_rows_of([append_record(0, [1], expire_after=HOUR)])))

    head = store.head(KEY)
    assert head is not None
    assert head.expiry == Expiry(HOUR, on)


class _FrozenClock(datetime):
    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return EVENING_UTC.astimezone(tz)


# The setting


def test_the_setting_defaults_to_utc_without_a_time_zone_database():
    assert CassandraSettings().expiry_time_zone == "UTC"
    assert CassandraSettings().expiry_zone is UTC


@pytest.mark.parametrize(
    ("name", "zone"),
    [
        ("UTC", UTC),
        ("Europe/Berlin", ZoneInfo("Europe/Berlin")),
        ("Etc/GMT-2", ZoneInfo("Etc/GMT-2")),
        ("+02:00", timezone(timedelta(hours=2))),
        ("-05:30", timezone(-timedelta(hours=5, minutes=30))),
    ],
)
def test_names_and_offsets(name: str, zone: Any):
    assert CassandraSettings(expiry_time_zone=name).expiry_zone == zone
    assert time_zone(name) == zone


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "+2", "+19:00", "+02:75", "../etc/passwd"])
def test_unknown_zones_are_refused_at_start(name: str):
    with pytest.raises(ValidationError, match="time zone"):
        CassandraSettings(expiry_time_zone=name)


def test_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KJOURNAL_CASSANDRA__EXPIRY_TIME_ZONE", "Europe/Berlin")
    assert ReplicatorSettings().cassandra.expiry_zone == ZoneInfo("Europe/Berlin")
