"""Binder produces exactly what the driver's own bind produces, on a real prepared statement."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime

import pytest
from cassandra.cluster import Session
from cassandra.query import UNSET_VALUE
from kjournal.cassandra.binding import Binder
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload


def _records() -> list[EventRecord]:
    """Two Kafka records of two events each; the events of a record share its objects."""
    records = []
    for offset in (7, 8):
        position = PartitionOffset(3, offset)
        timestamp = datetime(2026, 1, 1, 12, 0, offset, tzinfo=UTC)
        metadata = RecordMetadata()
        headers = {"trace": f"t-{offset}"}
        for n in (1, 2):
            seq = SeqNr(offset * 10 + n)
            payload = JsonPayload({"n": n}) if n == 1 else TextPayload("plain")
            event = Event(seq, frozenset({"tag"}) if n == 2 else frozenset(), payload)
            records.append(
                EventRecord(event, timestamp, position, "origin", None, metadata, headers)
            )
    return records


def test_bind_all_equals_the_drivers_bind(kj_session: Session, tables: TableNames) -> None:
    prepared = kj_session.prepare(journal.insert_cql(tables))
    rows = journal.insert_rows(Key("topic", "id"), 0, _records(), uuid.uuid4())
    binder = Binder(prepared)

    ours = [bound.values for bound in binder.bind_all(rows)]
    single = [binder.bind(row).values for row in rows]
    drivers = [prepared.bind(row).values for row in rows]

    assert ours == drivers
    assert single == drivers
    assert UNSET_VALUE in drivers[0]  # version is absent: stays UNSET, not null


def test_a_value_of_the_wrong_type_gets_the_drivers_error(
    kj_session: Session, tables: TableNames
) -> None:
    prepared = kj_session.prepare(journal.insert_cql(tables))
    row = list(journal.insert_rows(Key("topic", "id"), 0, _records()[:1], None)[0])
    row[3] = "not a seqNr"

    with pytest.raises(TypeError, match='column "seq_nr"'):
        Binder(prepared).bind(row)
