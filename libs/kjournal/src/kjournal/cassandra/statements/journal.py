"""The `journal` table: one row per event, partitioned by (id, topic, segment).

Its definition, its statements and its row codec (both directions). Rows are plain tuples (see
session.py); `INSERT_COLUMNS` and `SELECT_COLUMNS` fix the column order of the statements built
here, so a SELECT and its decoder (or an INSERT and its bind values) cannot disagree. Absent
values are bound as UNSET, never as null: a null column in an INSERT writes a tombstone, which the
Scala writer avoids the same way.

`EventRowDecoder` is the read hot path: see docs/performance.md before changing `Event` or
`EventRecord`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from types import MappingProxyType
from typing import Any
from typing import Final
from typing import NoReturn
from typing import cast

from cassandra.query import UNSET_VALUE
from cassandra.query import PreparedStatement
from cassandra.query import Statement

from kjournal.cassandra.binding import Binder
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import Prepare
from kjournal.cassandra.statements import cql
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns
from kjournal.errors import DataIntegrityError
from kjournal.errors import FormatError
from kjournal.errors import InvalidPayload
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Payload
from kjournal.model import PayloadType
from kjournal.model import TextPayload
from kjournal.model.action import RESERVED_HEADERS
from kjournal.model.fast import EVENT_RECORD_SETTERS
from kjournal.model.fast import EVENT_SETTERS
from kjournal.wire import json_text
from kjournal.wire.metadata_json import record_metadata_from_json
from kjournal.wire.metadata_json import record_metadata_to_json

__all__ = [
    "INSERT_COLUMNS",
    "JOURNAL",
    "META_RECORD_ID_INDEX",
    "SELECT_COLUMNS",
    "EventRowDecoder",
    "StoreStatements",
    "delete_row_cql",
    "delete_segment_cql",
    "delete_segment_to_cql",
    "event_record_from_row",
    "insert_cql",
    "insert_rows",
    "insert_values",
    "payload_from_columns",
    "payload_to_columns",
    "select_cql",
    "unset_if_none",
]

_NO_TAGS: Final[frozenset[str]] = frozenset()
_NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})
_BINARY, _TEXT, _JSON = PayloadType.BINARY.value, PayloadType.TEXT.value, PayloadType.JSON.value

JOURNAL = TableDef(
    columns=cql_columns(
        "id text, topic text, segment bigint, seq_nr bigint, partition int, offset bigint,"
        " timestamp timestamp, origin text, version text, meta_record_id uuid, tags set<text>,"
        " metadata text, payload_type text, payload_txt text, payload_bin blob,"
        " headers map<text, text>"
    ),
    partition_key=("id", "topic", "segment"),
    clustering=("seq_nr", "timestamp"),
)

INSERT_COLUMNS: Final = (
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
SELECT_COLUMNS: Final = INSERT_COLUMNS[3:]
META_RECORD_ID_INDEX: Final = SELECT_COLUMNS.index("meta_record_id")


# A segment of one journal: the table's partition key.
_SEGMENT: Final = "id = ? AND topic = ? AND segment = ?"


def insert_cql(tables: TableNames) -> str:
    return cql.insert(tables.qualified(tables.journal), INSERT_COLUMNS)


def delete_segment_cql(tables: TableNames) -> str:
    """A whole segment of one journal; binds (id, topic, segment)."""
    return cql.delete(tables.qualified(tables.journal), _SEGMENT)


def delete_segment_to_cql(tables: TableNames) -> str:
    """A segment's rows with seq_nr ≤ to; binds (id, topic, segment, to)."""
    return cql.delete(tables.qualified(tables.journal), f"{_SEGMENT} AND seq_nr <= ?")


def delete_row_cql(tables: TableNames) -> str:
    """One row; binds (id, topic, segment, seq_nr, timestamp). The check's repair's alone."""
    row = f"{_SEGMENT} AND seq_nr = ? AND timestamp = ?"
    return cql.delete(tables.qualified(tables.journal), row)


# Cassandra returns these as text: the driver builds uuid.UUID, SortedSet and OrderedMap values
# in pure Python, which costs more client CPU than all the rest of a row together.
_SELECTED_AS_TEXT: Final = {
    "meta_record_id": "CAST(meta_record_id AS text)",
    "tags": "toJson(tags)",
    "headers": "toJson(headers)",
}


def select_cql(tables: TableNames) -> str:
    """Rows of one segment with `from ≤ seq_nr ≤ to`; binds (id, topic, segment, from, to).

    Columns in `SELECT_COLUMNS` order, with meta_record_id as text and tags and headers
    as JSON text (`toJson`), the form EventRowDecoder reads fastest.
    """
    columns = [_SELECTED_AS_TEXT.get(name, name) for name in SELECT_COLUMNS]
    where = f"{_SEGMENT} AND seq_nr >= ? AND seq_nr <= ?"
    return cql.select(tables.qualified(tables.journal), columns, where)


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
    """The payload of a row, refusing rows whose columns contradict `payload_type`.

    As kafka-journal reads them: a null `payload_type` is no payload whatever the columns hold;
    `payload_txt`, when set, is the payload (`payload_bin` is then ignored), else `payload_bin`
    (null: empty bytes). So `binary` with text, and `text` or `json` without text (with bytes or
    nothing), are a DataIntegrityError, where kafka-journal raises its JournalError.
    """
    if payload_type is None:
        return None
    if payload_type in (_JSON, _TEXT):
        if payload_txt is None:
            raise DataIntegrityError(_mismatch(payload_type, payload_txt, payload_bin))
        if payload_type == _JSON:
            return JsonPayload.from_text(payload_txt)
        return TextPayload(payload_txt)
    if payload_type == _BINARY:
        if payload_txt is not None:
            raise DataIntegrityError(_mismatch(payload_type, payload_txt, payload_bin))
        return BinaryPayload(b"" if payload_bin is None else payload_bin)
    raise FormatError(f"unknown payload_type {payload_type!r}")


def _mismatch(payload_type: str, payload_txt: str | None, payload_bin: bytes | None) -> str:
    columns = {
        (True, True): "payload_txt and payload_bin",
        (True, False): "only payload_txt",
        (False, True): "only payload_bin",
        (False, False): "neither payload_txt nor payload_bin",
    }[payload_txt is not None, payload_bin is not None]
    return f"data integrity violated: payload_type {payload_type!r} with {columns}"


def insert_values(
    key: Key, segment: int, record: EventRecord, meta_record_id: uuid.UUID | None
) -> tuple[Any, ...]:
    """Bind values for `insert_cql`, one event of `key` in journal segment `segment`."""
    return insert_rows(key, segment, (record,), meta_record_id)[0]


def insert_rows(
    key: Key, segment: int, records: Iterable[EventRecord], meta_record_id: uuid.UUID | None
) -> list[tuple[Any, ...]]:
    """`insert_values` of many events. The columns that come from the Kafka record are
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
                unset_if_none(record.origin),
                unset_if_none(record.version),
                unset_if_none(meta_record_id),
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
                unset_if_none(payload_type),
                unset_if_none(payload_txt),
                unset_if_none(payload_bin),
                metadata,
                headers,
            )
        )
    return rows


def unset_if_none(value: object) -> object:
    """UNSET for an absent value (a null would write a tombstone)."""
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


# The read hot path builds these frozen, slotted values without their __init__ (kjournal/model/
# fast.py says why and what guards it); the query bounds seqNrs to ≥ 1.
_new = object.__new__
_EVENT_SLOTS = EVENT_SETTERS
_RECORD_SLOTS = EVENT_RECORD_SETTERS


class EventRowDecoder:
    """Decodes pages of `SELECT_COLUMNS` rows into EventRecords: the read hot path.

    Tags and headers may come as `toJson` text (what select_cql asks for) or as the
    driver's collections; meta_record_id is not decoded. Everything but seq_nr, tags and payload
    comes from the event's Kafka record (position, timestamp, origin, version, metadata,
    headers), so consecutive rows of one record share those values, decoded once per record.

    `key`, the journal the rows belong to, names a row that cannot be decoded in the error.
    """

    __slots__ = ("_key", "_last")

    def __init__(self, key: Key | None = None) -> None:
        self._key = key
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
        row: tuple[Any, ...] = ()
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
            error = DataIntegrityError if isinstance(exc, DataIntegrityError) else FormatError
            raise error(f"{self._row_name(seq, row)} cannot be decoded: {exc}") from exc
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

    def _row_name(self, seq: object, row: tuple[Any, ...]) -> str:
        journal = "" if self._key is None else f" of {self._key}"
        where = f" (partition {row[1]}, offset {row[2]})" if len(row) > 2 else ""
        return f"journal row{journal} seqNr {seq}{where}"


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
        return _user_headers(dict(value)) if value else _NO_HEADERS
    headers = _load_json(value)  # toJson: a JSON object, or null for an empty map
    if headers is None:
        return _NO_HEADERS
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError(f"headers are not an object of strings: {value}")
    return _user_headers(cast(dict[str, str], headers)) if headers else _NO_HEADERS


def _user_headers(headers: dict[str, str]) -> Mapping[str, str]:
    """Without trace headers, which a replicator of another implementation may have stored."""
    if not RESERVED_HEADERS.isdisjoint(headers):
        headers = {name: v for name, v in headers.items() if name not in RESERVED_HEADERS}
    return headers or _NO_HEADERS


def event_record_from_row(row: tuple[Any, ...]) -> EventRecord:
    """One `SELECT_COLUMNS` row as an EventRecord (for many rows use EventRowDecoder)."""
    return EventRowDecoder()(row)


@dataclass(frozen=True, slots=True)
class StoreStatements:
    """The replicator's store's statements on `journal`."""

    insert: Binder
    delete_segment: PreparedStatement
    delete_segment_to: PreparedStatement
    select: PreparedStatement
    delete_row: PreparedStatement

    @classmethod
    def prepare(cls, prepare: Prepare, tables: TableNames) -> StoreStatements:
        return cls(
            Binder(prepare(insert_cql(tables))),
            prepare(delete_segment_cql(tables)),
            prepare(delete_segment_to_cql(tables)),
            prepare(select_cql(tables)),
            prepare(delete_row_cql(tables)),
        )

    def bind_delete(self, key: Key, segment: int, to: int | None) -> Statement:
        """A segment's rows, all of them (`to` None) or up to seqNr `to`."""
        if to is None:
            return self.delete_segment.bind((key.id, key.topic, segment))
        return self.delete_segment_to.bind((key.id, key.topic, segment, to))
