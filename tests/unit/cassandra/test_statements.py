"""Row conversions: journal rows ⇄ EventRecord, metajournal rows → JournalHead, durations."""

from __future__ import annotations

import json
import uuid
from datetime import UTC
from datetime import date
from datetime import datetime
from typing import Any

import pytest
from cassandra.query import UNSET_VALUE
from cassandra.util import Date
from cassandra.util import Duration
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.cassandra.statements import quarantine
from kjournal.cassandra.tables import cql_columns
from kjournal.errors import FormatError
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.model.head import Expiry
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord

KEY = Key("journal", "id-1")
WHEN = datetime(2026, 11, 22, 10, 30, 15, 123000, tzinfo=UTC)
DAY = 86_400_000_000_000


def as_stored(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a SELECT of journal.SELECT_COLUMNS returns after an INSERT with `values`."""
    by_name = dict(zip(journal.INSERT_COLUMNS, values, strict=True))
    stored = {name: None if value is UNSET_VALUE else value for name, value in by_name.items()}
    timestamp: datetime = by_name["timestamp"]
    stored["timestamp"] = timestamp.astimezone(UTC).replace(tzinfo=None)
    return tuple(stored[name] for name in journal.SELECT_COLUMNS)


def record(payload, **fields) -> EventRecord:
    return EventRecord(
        event=Event(SeqNr(7), frozenset({"a", "b"}), payload),
        timestamp=WHEN,
        partition_offset=PartitionOffset(3, 1234),
        **fields,
    )


@pytest.mark.parametrize(
    "payload",
    [
        None,
        BinaryPayload(b"\x00\x01\xff"),
        BinaryPayload(b""),
        TextPayload("héllo"),
        TextPayload(""),
        JsonPayload({"a": [1, 2.5, None, True], "b": "ü"}),
        JsonPayload(None),
        JsonPayload("just a string"),
    ],
)
def test_event_record_round_trips_through_a_journal_row(payload):
    original = record(
        payload,
        origin="host-1",
        version="0.1.0",
        metadata=RecordMetadata(
            HeaderMetadata({"h": 1}), PayloadMetadata(ExpireAfter.of(1, "day"), {"p": 2})
        ),
        headers={"k": "v"},
    )

    values = journal.insert_values(KEY, 0, original, uuid.uuid4())

    assert values[:3] == ("id-1", "journal", 0)
    assert journal.event_record_from_row(as_stored(values)) == original


def as_selected(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """What journal.select_cql returns: meta_record_id as text, tags and headers as toJson."""
    row = dict(zip(journal.SELECT_COLUMNS, as_stored(values), strict=True))
    row["meta_record_id"] = None if row["meta_record_id"] is None else str(row["meta_record_id"])
    row["tags"] = json.dumps(sorted(row["tags"])) if row["tags"] else "null"
    row["headers"] = json.dumps(row["headers"]) if row["headers"] else "null"
    return tuple(row.values())


@pytest.mark.parametrize("tags", [frozenset(), frozenset({"a"}), frozenset({"b", "a", 'ü "q"'})])
@pytest.mark.parametrize("headers", [{}, {"k": "v"}, {"a": "1", "b": "é"}])
def test_rows_with_collections_as_json_text(tags: frozenset[str], headers: dict[str, str]):
    original = EventRecord(
        event=Event(SeqNr(3), tags, TextPayload("x")),
        timestamp=WHEN,
        partition_offset=PartitionOffset(0, 1),
        headers=headers,
    )

    row = as_selected(journal.insert_values(KEY, 0, original, uuid.uuid4()))

    assert journal.event_record_from_row(row) == original


@pytest.mark.parametrize(
    ("column", "text"),
    [("tags", '{"a": 1}'), ("tags", "[1]"), ("headers", '["a"]'), ("headers", '{"a": 1}')],
)
def test_collections_text_of_the_wrong_shape(column: str, text: str):
    values: tuple[Any, ...] = (1, 0, 9, datetime(2026, 1, 1), *(None,) * 9)
    row = dict(zip(journal.SELECT_COLUMNS, values, strict=True))
    row[column] = text

    with pytest.raises(FormatError, match="not"):
        journal.event_record_from_row(tuple(row.values()))


def test_absent_values_are_unset_not_null():
    values = dict(
        zip(journal.INSERT_COLUMNS, journal.insert_values(KEY, 0, record(None), None), strict=True)
    )

    for column in (
        "origin",
        "version",
        "meta_record_id",
        "payload_type",
        "payload_txt",
        "payload_bin",
        "headers",
    ):
        assert values[column] is UNSET_VALUE, column
    assert values["metadata"] == '{"header":{},"payload":{}}'


def test_payload_columns_per_type():
    assert journal.payload_to_columns(BinaryPayload(b"x")) == ("binary", None, b"x")
    assert journal.payload_to_columns(TextPayload("x")) == ("text", "x", None)
    assert journal.payload_to_columns(JsonPayload({"a": 1})) == ("json", '{"a":1}', None)
    assert journal.payload_to_columns(None) == (None, None, None)


def test_payload_columns_as_the_scala_reader_tolerates_them():
    assert journal.payload_from_columns("binary", None, None) == BinaryPayload(b"")
    with pytest.raises(FormatError, match="payload_type"):
        journal.payload_from_columns("xml", "<a/>", None)
    stored = journal.payload_from_columns("json", "{not json", None)  # parsed only when used
    assert isinstance(stored, JsonPayload)
    with pytest.raises(FormatError, match="JSON"):
        _ = stored.value
    with pytest.raises(FormatError, match="payload_txt"):
        journal.payload_from_columns("json", None, None)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (' {"a": 1} ', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ("12345678901234567890123", 12345678901234567890123),
    ],
)
def test_json_payload_text_as_any_json_writer_spells_it(text: str, value: object):
    assert journal.payload_from_columns("json", text, None) == JsonPayload(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["NaN", "[1, Infinity]", '{"a":1} x', "", '{"a":'])
def test_json_payload_text_that_is_not_json_fails_when_it_is_used(text: str):
    # Stored JSON is parsed lazily (the replicator validated it); corruption surfaces on use.
    stored = journal.payload_from_columns("json", text, None)
    assert isinstance(stored, JsonPayload)
    with pytest.raises(FormatError, match="not valid JSON"):
        _ = stored.value
    row = (1, 0, 9, datetime(2026, 1, 1), None, None, None, None, "json", text, None, None, None)
    payload = journal.event_record_from_row(row).event.payload
    assert isinstance(payload, JsonPayload)
    assert payload.raw_text == text
    with pytest.raises(FormatError, match="not valid JSON"):
        _ = payload.value


def test_row_values_the_driver_returns_are_normalised():
    row = (5, 0, 9, datetime(2026, 1, 1), None, None, None, None, None, None, None, None, None)

    decoded = journal.event_record_from_row(row)

    assert decoded.timestamp == datetime(2026, 1, 1, tzinfo=UTC)
    assert decoded.event.tags == frozenset()
    assert decoded.headers == {}
    assert decoded.metadata == RecordMetadata()
    assert decoded.origin is None
    assert decoded.event.payload is None


def test_old_header_only_metadata_is_read_as_the_header_half():
    row = (
        5,
        0,
        9,
        datetime(2026, 1, 1),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        '{"data":{"x":1}}',
        None,
    )

    assert journal.event_record_from_row(row).metadata == RecordMetadata(HeaderMetadata({"x": 1}))


def test_decoder_shares_position_and_metadata_between_rows_of_one_append():
    decode = journal.EventRowDecoder()
    meta = '{"header":{"data":1},"payload":{}}'
    rows = [
        (n, 0, 9, datetime(2026, 1, 1), None, None, None, None, None, None, None, meta, None)
        for n in (1, 2)
    ]

    first, second = decode(rows[0]), decode(rows[1])

    assert first.partition_offset is second.partition_offset
    assert first.metadata is second.metadata


def test_undecodable_rows_raise_format_error():
    bad_seq = (0, 0, 9, datetime(2026, 1, 1), None, None, None, None, None, None, None, None, None)
    with pytest.raises(FormatError, match="seqNr 0"):
        journal.event_record_from_row(bad_seq)


@pytest.mark.parametrize(
    ("expire_after", "duration"),
    [
        (ExpireAfter.of(1, "day"), Duration(0, 1, 0)),
        (ExpireAfter.of(30, "minutes"), Duration(0, 0, 30 * 60 * 10**9)),
        (ExpireAfter.of(36, "hours"), Duration(0, 1, 12 * 3600 * 10**9)),
        (ExpireAfter(1), Duration(0, 0, 1)),
        (ExpireAfter(400 * DAY + 5), Duration(0, 400, 5)),
    ],
)
def test_expire_after_as_cassandra_duration(expire_after, duration):
    assert metajournal.expire_after_to_duration(expire_after) == duration
    assert metajournal.expire_after_from_duration(duration) == expire_after


def test_durations_that_are_not_an_expire_after():
    with pytest.raises(FormatError, match="months"):
        metajournal.expire_after_from_duration(Duration(1, 0, 0))
    with pytest.raises(FormatError, match="expire_after"):
        metajournal.expire_after_from_duration(Duration(0, 0, 0))


def test_journal_head_from_a_metajournal_row():
    record_id = uuid.uuid4()
    row = (2, 77, 100, 40, 10, Duration(0, 1, 0), Date(date(2026, 12, 1)), record_id)

    assert metajournal.journal_head_from_row(row) == JournalHead(
        partition_offset=PartitionOffset(2, 77),
        segment_size=100,
        seq_nr=SeqNr(40),
        delete_to=SeqNr(10),
        expiry=Expiry(ExpireAfter.of(1, "day"), date(2026, 12, 1)),
        record_id=record_id,
    )


def test_journal_head_without_optional_columns():
    head = metajournal.journal_head_from_row((0, 1, 10_000, 5, None, None, None, None))

    assert head.delete_to is None
    assert head.expiry is None
    assert head.record_id is None


def test_expiry_needs_both_columns_as_in_scala():
    assert (
        metajournal.journal_head_from_row((0, 1, 10, 5, None, Duration(0, 1, 0), None, None)).expiry
        is None
    )


def test_journal_head_values_round_trip():
    head = JournalHead(
        PartitionOffset(1, 2),
        10,
        SeqNr(3),
        SeqNr(1),
        Expiry(ExpireAfter.of(2, "days"), date(2026, 1, 3)),
        uuid.uuid4(),
    )

    assert metajournal.journal_head_from_row(metajournal.journal_head_values(head)) == head
    bare = metajournal.journal_head_values(JournalHead(PartitionOffset(1, 2), 10, SeqNr(3)))
    assert bare[4:] == (UNSET_VALUE,) * 4


def test_bad_metajournal_rows_raise_format_error():
    with pytest.raises(FormatError, match="segment_size"):
        metajournal.journal_head_from_row((0, 1, None, 5, None, None, None, None))
    with pytest.raises(FormatError):
        metajournal.journal_head_from_row((0, 1, 10, 0, None, None, None, None))


def test_quarantined_record_round_trip():
    original = QuarantinedRecord(
        topic="journal",
        partition=1,
        offset=9,
        id="id-1",
        reason="bad header",
        header=b"{",
        value=None,
        timestamp=WHEN,
        quarantined_at=WHEN,
    )
    values = quarantine.insert_values(original)
    stored = tuple(
        None if v is UNSET_VALUE else (v.replace(tzinfo=None) if isinstance(v, datetime) else v)
        for v in values
    )

    assert quarantine.quarantined_record_from_row(stored) == original


def test_column_lists_match_the_table_definitions():
    assert set(journal.INSERT_COLUMNS) == {name for name, _ in journal.JOURNAL.columns}
    assert set(journal.SELECT_COLUMNS) <= set(journal.INSERT_COLUMNS)
    assert set(metajournal.HEAD_COLUMNS) <= {name for name, _ in metajournal.METAJOURNAL.columns}
    assert tuple(name for name, _ in quarantine.QUARANTINE.columns) == quarantine.COLUMNS
    assert journal.insert_cql(TableNames(keyspace="ks")).startswith(
        "INSERT INTO ks.journal (id, topic,"
    )


def test_columns_are_read_as_create_table_spells_them():
    assert cql_columns("id text, tags set<text>,  headers map<text, text>, n bigint") == (
        ("id", "text"),
        ("tags", "set<text>"),
        ("headers", "map<text, text>"),
        ("n", "bigint"),
    )
    assert journal.JOURNAL.column_type("headers") == "map<text, text>"


@pytest.mark.parametrize("declared", ["id", "id text topic text", "id text,, n int", "id map<text"])
def test_a_column_list_that_is_not_name_type_pairs_is_refused(declared: str):
    with pytest.raises(ValueError, match="not a `name type` column"):
        cql_columns(declared)
