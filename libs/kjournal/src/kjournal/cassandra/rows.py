"""Conversions between Cassandra rows and the journal's values, in both directions.

Rows are plain tuples (see session.py); each `*_COLUMNS` tuple fixes the column order of the
matching statement, and the `*_cql` functions build those statements, so a SELECT and its decoder
(or an INSERT and its bind values) cannot disagree.

Absent values are bound as UNSET, never as null: a null column in an INSERT writes a tombstone,
which the Scala writer avoids the same way.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from types import MappingProxyType
from typing import Any, Final, NoReturn, cast

from cassandra.query import UNSET_VALUE
from cassandra.util import Date, Duration

from kjournal.cassandra.settings import TableNames
from kjournal.errors import FormatError, InvalidDuration, InvalidPayload, InvalidSeqNr
from kjournal.model import (
    BinaryPayload,
    Event,
    EventRecord,
    ExpireAfter,
    JsonPayload,
    JsonValue,
    Key,
    PartitionOffset,
    Payload,
    PayloadType,
    TextPayload,
    seq_nr,
)
from kjournal.model.head import MIN_SEGMENT_SIZE, Expiry, JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.wire import json_text
from kjournal.wire.metadata_json import record_metadata_from_json, record_metadata_to_json

__all__ = [
    "JOURNAL_INSERT_COLUMNS",
    "JOURNAL_SELECT_COLUMNS",
    "METAJOURNAL_HEAD_COLUMNS",
    "META_RECORD_ID_INDEX",
    "QUARANTINE_COLUMNS",
    "EventRowDecoder",
    "event_record_from_row",
    "expire_after_from_duration",
    "expire_after_to_duration",
    "journal_head_from_row",
    "journal_head_values",
    "journal_insert_cql",
    "journal_insert_rows",
    "journal_insert_values",
    "journal_select_cql",
    "metajournal_head_cql",
    "payload_from_columns",
    "payload_to_columns",
    "quarantine_insert_cql",
    "quarantine_insert_values",
    "quarantine_select_cql",
    "quarantined_record_from_row",
]

_NANOS_PER_DAY: Final = 86_400_000_000_000
_NO_TAGS: Final[frozenset[str]] = frozenset()
_NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})
_BINARY, _TEXT, _JSON = PayloadType.BINARY.value, PayloadType.TEXT.value, PayloadType.JSON.value

# --- journal ---------------------------------------------------------------------------------

JOURNAL_INSERT_COLUMNS: Final = (
    "id",
    "topic",
    "segment",
    "seq_nr",
    "partition",
    "offset",
    "timestamp",
    "origin",
    "version",
    "meta_record_id",
    "tags",
    "payload_type",
    "payload_txt",
    "payload_bin",
    "metadata",
    "headers",
)

# a row's columns without its partition key (id, topic, segment), in insert order
JOURNAL_SELECT_COLUMNS: Final = JOURNAL_INSERT_COLUMNS[3:]
META_RECORD_ID_INDEX: Final = JOURNAL_SELECT_COLUMNS.index("meta_record_id")


def journal_insert_cql(tables: TableNames) -> str:
    columns = ", ".join(JOURNAL_INSERT_COLUMNS)
    marks = ", ".join("?" for _ in JOURNAL_INSERT_COLUMNS)
    return f"INSERT INTO {tables.qualified(tables.journal)} ({columns}) VALUES ({marks})"


# Cassandra returns these as text: the driver builds uuid.UUID, SortedSet and OrderedMap values
# in pure Python, which costs more client CPU than all the rest of a row together.
_SELECTED_AS_TEXT: Final = {
    "meta_record_id": "CAST(meta_record_id AS text)",
    "tags": "toJson(tags)",
    "headers": "toJson(headers)",
}


def journal_select_cql(tables: TableNames) -> str:
    """Rows of one segment with `from ≤ seq_nr ≤ to`; binds (id, topic, segment, from, to).

    Columns in `JOURNAL_SELECT_COLUMNS` order, with meta_record_id as text and tags and headers
    as JSON text (`toJson`), the form EventRowDecoder reads fastest.
    """
    columns = ", ".join(_SELECTED_AS_TEXT.get(name, name) for name in JOURNAL_SELECT_COLUMNS)
    return (
        f"SELECT {columns} FROM {tables.qualified(tables.journal)} "
        "WHERE id = ? AND topic = ? AND segment = ? AND seq_nr >= ? AND seq_nr <= ?"
    )


def payload_to_columns(payload: Payload | None) -> tuple[str | None, str | None, bytes | None]:
    """(payload_type, payload_txt, payload_bin): binary → blob, text → text, json → JSON text."""
    match payload:
        case None:
            return None, None, None
        case BinaryPayload(value):
            return _BINARY, None, value
        case TextPayload(value):
            return _TEXT, value, None
        case JsonPayload(raw_text=str(text)):
            return _JSON, text, None
        case JsonPayload(value):
            try:
                return _JSON, json_text.dumps(value), None
            except ValueError as exc:
                raise InvalidPayload(f"JSON payload cannot be written: {exc}") from exc
    raise InvalidPayload(f"unknown payload {payload!r}")


def payload_from_columns(
    payload_type: str | None, payload_txt: str | None, payload_bin: bytes | None
) -> Payload | None:
    if payload_type is None:
        return None
    if payload_type == _JSON:
        if payload_txt is None:
            raise FormatError("json payload without payload_txt")
        return JsonPayload.from_text(payload_txt)
    if payload_type == _BINARY:
        return BinaryPayload(b"" if payload_bin is None else payload_bin)
    if payload_type == _TEXT:
        return TextPayload("" if payload_txt is None else payload_txt)
    raise FormatError(f"unknown payload_type {payload_type!r}")


def journal_insert_values(
    key: Key, segment: int, record: EventRecord, meta_record_id: uuid.UUID | None
) -> tuple[Any, ...]:
    """Bind values for `journal_insert_cql`, one event of `key` in journal segment `segment`."""
    return journal_insert_rows(key, segment, (record,), meta_record_id)[0]


def journal_insert_rows(
    key: Key, segment: int, records: Iterable[EventRecord], meta_record_id: uuid.UUID | None
) -> list[tuple[Any, ...]]:
    """`journal_insert_values` of many events. The columns that come from the Kafka record are
    computed once per record and shared (the same objects) by its events' rows."""
    rows: list[tuple[Any, ...]] = []
    record_of: tuple[object, ...] = ()
    shared: tuple[Any, ...] = ()
    metadata: str = ""
    headers: object = UNSET_VALUE
    for record in records:
        source = (
            record.partition_offset,
            record.timestamp,
            record.origin,
            record.version,
            record.metadata,
            record.headers,
        )
        if len(record_of) != len(source) or any(
            a is not b for a, b in zip(source, record_of, strict=True)
        ):
            record_of = source
            position = record.partition_offset
            shared = (
                position.partition,
                position.offset,
                record.timestamp,
                _unset_if_none(record.origin),
                _unset_if_none(record.version),
                _unset_if_none(meta_record_id),
            )
            metadata = record_metadata_to_json(record.metadata)
            headers = dict(record.headers) if record.headers else UNSET_VALUE
        event = record.event
        payload_type, payload_txt, payload_bin = payload_to_columns(event.payload)
        rows.append(
            (
                key.id,
                key.topic,
                segment,
                event.seq_nr,
                *shared,
                event.tags or UNSET_VALUE,
                _unset_if_none(payload_type),
                _unset_if_none(payload_txt),
                _unset_if_none(payload_bin),
                metadata,
                headers,
            )
        )
    return rows


def _unset_if_none(value: object) -> object:
    return UNSET_VALUE if value is None else value


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


# json.loads wraps the C scanner in Python that costs a third of the parse: call the scanner
# directly and hand anything it does not consume whole (whitespace, errors) to json_text, whose
# rules (no NaN/Infinity, one value) this decoder shares.
_json_decoder = json.JSONDecoder(parse_constant=_reject_constant)
# typeshed does not declare the instance attribute JSONDecoder.__init__ sets.
_scan_json: Callable[[str, int], tuple[Any, int]] = _json_decoder.scan_once  # type: ignore[attr-defined]


def _load_json(text: str) -> JsonValue:
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, ValueError):
        return json_text.loads(text)
    if end != len(text):
        return json_text.loads(text)
    result: JsonValue = value
    return result


# The read hot path builds these frozen, slotted values without their __init__ (which costs
# twice as much): object.__new__ plus the slot descriptors, which frozen dataclasses leave alone.
# Every value so built is one __init__ would accept: the query bounds seqNrs to ≥ 1 and
# tests/unit/cassandra compares the results with normally built ones.
_new = object.__new__
_EVENT_SLOTS = tuple(Event.__dict__[name].__set__ for name in ("seq_nr", "tags", "payload"))
_RECORD_SLOTS = tuple(
    EventRecord.__dict__[name].__set__
    for name in (
        "event",
        "timestamp",
        "partition_offset",
        "origin",
        "version",
        "metadata",
        "headers",
    )
)


class EventRowDecoder:
    """Decodes pages of `JOURNAL_SELECT_COLUMNS` rows into EventRecords: the read hot path.

    Tags and headers may come as `toJson` text (what journal_select_cql asks for) or as the
    driver's collections; meta_record_id is not decoded. Everything but seq_nr, tags and payload
    comes from the event's Kafka record (position, timestamp, origin, version, metadata,
    headers), so consecutive rows of one record share those values, decoded once per record.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        # The last row's record-level columns, then their decoded values (see `page`).
        self._last: tuple[Any, ...] = (None,) * 13

    def __call__(self, row: tuple[Any, ...]) -> EventRecord:
        return self.page((row,))[0]

    def page(self, rows: Iterable[tuple[Any, ...]]) -> list[EventRecord]:
        records: list[EventRecord] = []
        append = records.append
        new = _new
        set_seq, set_tags, set_payload = _EVENT_SLOTS
        set_event, set_ts, set_position, set_origin, set_version, set_meta, set_headers = (
            _RECORD_SLOTS
        )
        (
            last_partition,
            last_offset,
            last_ts,
            last_origin,
            last_version,
            last_meta_text,
            last_headers_in,
            last_tags_in,
            position,
            aware_ts,
            metadata,
            headers,
            tags,
        ) = self._last
        seq = None
        try:
            for row in rows:
                (
                    seq,
                    partition,
                    offset,
                    timestamp,
                    origin,
                    version,
                    _meta_record_id,
                    tags_in,
                    payload_type,
                    payload_txt,
                    payload_bin,
                    meta_text,
                    headers_in,
                ) = row
                if seq < 1:
                    raise ValueError("seqNr below 1")
                if payload_type is None:
                    payload: Payload | None = None
                elif payload_type == _JSON and payload_txt is not None:
                    payload = JsonPayload.from_text(payload_txt)
                else:
                    payload = payload_from_columns(payload_type, payload_txt, payload_bin)
                if tags_in != last_tags_in or tags is None:
                    tags = _tags(tags_in)
                    last_tags_in = tags_in
                event = new(Event)
                set_seq(event, seq)
                set_tags(event, tags)
                set_payload(event, payload)
                if (
                    offset != last_offset
                    or partition != last_partition
                    or timestamp != last_ts
                    or meta_text != last_meta_text
                    or headers_in != last_headers_in
                    or origin != last_origin
                    or version != last_version
                ):
                    position = PartitionOffset(partition, offset)
                    aware_ts = timestamp.replace(tzinfo=UTC)
                    if meta_text != last_meta_text or metadata is None:
                        metadata = record_metadata_from_json(meta_text)
                    headers = _headers(headers_in)
                    last_partition, last_offset, last_ts = partition, offset, timestamp
                    last_origin, last_version = origin, version
                    last_meta_text, last_headers_in = meta_text, headers_in
                record = new(EventRecord)
                set_event(record, event)
                set_ts(record, aware_ts)
                set_position(record, position)
                set_origin(record, origin)
                set_version(record, version)
                set_meta(record, metadata)
                set_headers(record, headers)
                append(record)
        except (ValueError, TypeError, AttributeError, FormatError) as exc:
            raise FormatError(f"journal row seqNr {seq} cannot be decoded: {exc}") from exc
        finally:
            self._last = (
                last_partition,
                last_offset,
                last_ts,
                last_origin,
                last_version,
                last_meta_text,
                last_headers_in,
                last_tags_in,
                position,
                aware_ts,
                metadata,
                headers,
                tags,
            )
        return records


def _tags(value: str | Iterable[str] | None) -> frozenset[str]:
    if not isinstance(value, str):
        return frozenset(value) if value else _NO_TAGS
    tags = _load_json(value)  # toJson: a JSON array, or null for an empty set
    if tags is None:
        return _NO_TAGS
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ValueError(f"tags are not a list of strings: {value}")
    return frozenset(cast(list[str], tags)) if tags else _NO_TAGS


def _headers(value: str | Mapping[str, str] | None) -> Mapping[str, str]:
    if not isinstance(value, str):
        return dict(value) if value else _NO_HEADERS
    headers = _load_json(value)  # toJson: a JSON object, or null for an empty map
    if headers is None:
        return _NO_HEADERS
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError(f"headers are not an object of strings: {value}")
    return cast(dict[str, str], headers) if headers else _NO_HEADERS


def event_record_from_row(row: tuple[Any, ...]) -> EventRecord:
    """One `JOURNAL_SELECT_COLUMNS` row as an EventRecord (for many rows use EventRowDecoder)."""
    return EventRowDecoder()(row)


# --- metajournal -----------------------------------------------------------------------------

METAJOURNAL_HEAD_COLUMNS: Final = (
    "partition",
    "offset",
    "segment_size",
    "seq_nr",
    "delete_to",
    "expire_after",
    "expire_on",
    "record_id",
)


def metajournal_head_cql(tables: TableNames) -> str:
    """The head of one journal in one bucket; binds (topic, segment, id)."""
    return (
        f"SELECT {', '.join(METAJOURNAL_HEAD_COLUMNS)} "
        f"FROM {tables.qualified(tables.metajournal)} WHERE topic = ? AND segment = ? AND id = ?"
    )


def expire_after_to_duration(value: ExpireAfter) -> Duration:
    """A Cassandra `duration` as the Scala library writes it: 0 months, whole days, rest nanos."""
    days, nanos = divmod(value.nanos, _NANOS_PER_DAY)
    return Duration(0, days, nanos)


def expire_after_from_duration(value: Duration) -> ExpireAfter:
    if value.months:
        raise FormatError(f"expire_after of {value.months} months has no fixed length")
    try:
        return ExpireAfter(value.days * _NANOS_PER_DAY + value.nanoseconds)
    except InvalidDuration as exc:
        raise FormatError(f"invalid expire_after: {exc}") from exc


def journal_head_from_row(row: tuple[Any, ...]) -> JournalHead:
    """A `METAJOURNAL_HEAD_COLUMNS` row as a JournalHead."""
    partition, offset, segment_size, seq, delete_to, expire_after, expire_on, record_id = row
    try:
        if segment_size is None or segment_size < MIN_SEGMENT_SIZE:
            raise ValueError(f"segment_size {segment_size} is below {MIN_SEGMENT_SIZE}")
        expiry = None
        if expire_after is not None and expire_on is not None:
            expiry = Expiry(expire_after_from_duration(expire_after), _as_date(expire_on))
        return JournalHead(
            partition_offset=PartitionOffset(partition, offset),
            segment_size=segment_size,
            seq_nr=seq_nr(seq),
            delete_to=None if delete_to is None else seq_nr(delete_to),
            expiry=expiry,
            record_id=record_id,
        )
    except (ValueError, TypeError, InvalidSeqNr) as exc:
        raise FormatError(f"metajournal row cannot be decoded: {exc}") from exc


def journal_head_values(head: JournalHead) -> tuple[Any, ...]:
    """`METAJOURNAL_HEAD_COLUMNS` bind values for a head (absent ones UNSET)."""
    expiry = head.expiry
    return (
        head.partition_offset.partition,
        head.partition_offset.offset,
        head.segment_size,
        head.seq_nr,
        _unset_if_none(head.delete_to),
        UNSET_VALUE if expiry is None else expire_after_to_duration(expiry.after),
        UNSET_VALUE if expiry is None else expiry.on,
        _unset_if_none(head.record_id),
    )


def _as_date(value: Date | date) -> date:
    return value if isinstance(value, date) else value.date()


# --- quarantine ------------------------------------------------------------------------------

QUARANTINE_COLUMNS: Final = (
    "topic",
    "id",
    "partition",
    "offset",
    "reason",
    "header",
    "value",
    "record_timestamp",
    "quarantined_at",
)

# A record without a key is kept under the empty id (the table's key cannot be null).
_NO_ID: Final = ""


def quarantine_insert_cql(tables: TableNames) -> str:
    columns = ", ".join(QUARANTINE_COLUMNS)
    marks = ", ".join("?" for _ in QUARANTINE_COLUMNS)
    return f"INSERT INTO {tables.qualified(tables.quarantine)} ({columns}) VALUES ({marks})"


def quarantine_select_cql(tables: TableNames) -> str:
    """The oldest quarantined record of one journal; binds (topic, id)."""
    return (
        f"SELECT {', '.join(QUARANTINE_COLUMNS)} FROM {tables.qualified(tables.quarantine)} "
        "WHERE topic = ? AND id = ? LIMIT 1"
    )


def quarantine_insert_values(record: QuarantinedRecord) -> tuple[Any, ...]:
    return (
        record.topic,
        _NO_ID if record.id is None else record.id,
        record.partition,
        record.offset,
        record.reason,
        _unset_if_none(record.header),
        _unset_if_none(record.value),
        _unset_if_none(record.timestamp),
        record.quarantined_at,
    )


def quarantined_record_from_row(row: tuple[Any, ...]) -> QuarantinedRecord:
    topic, id_, partition, offset, reason, header, value, timestamp, quarantined_at = row
    return QuarantinedRecord(
        topic=topic,
        partition=partition,
        offset=offset,
        id=id_ or None,
        reason=reason or "",
        header=header,
        value=value,
        timestamp=_utc(timestamp),
        quarantined_at=_utc(quarantined_at) or datetime.fromtimestamp(0, UTC),
    )


def _utc(value: datetime | None) -> datetime | None:
    """The driver returns naive UTC datetimes."""
    return None if value is None else value.replace(tzinfo=UTC)
