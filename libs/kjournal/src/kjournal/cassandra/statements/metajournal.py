"""The `metajournal` table: one head per journal, in buckets (`segment`) of the topic.

Its definition, its statements and the head's row codec. Which bucket holds a journal is
segments.py's `metajournal_bucket`; a journal's head may sit in the current layout (10 000
buckets) or the old one (100).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from datetime import datetime
from typing import Any
from typing import Final

from cassandra.query import UNSET_VALUE
from cassandra.query import PreparedStatement
from cassandra.query import Statement
from cassandra.util import Date
from cassandra.util import Duration

from kjournal.cassandra.binding import Binder
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import Prepare
from kjournal.cassandra.statements import cql
from kjournal.cassandra.statements.journal import unset_if_none
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns
from kjournal.errors import FormatError
from kjournal.errors import InvalidDuration
from kjournal.errors import InvalidSeqNr
from kjournal.fold.plan import UpdateHead
from kjournal.model import ExpireAfter
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import seq_nr
from kjournal.model.head import MIN_SEGMENT_SIZE
from kjournal.model.head import Expiry
from kjournal.model.head import JournalHead

__all__ = [
    "HEAD_COLUMNS",
    "HEAD_INSERT_COLUMNS",
    "HEAD_LOOKUP_GROUP",
    "METAJOURNAL",
    "HeadUpdate",
    "StoreStatements",
    "delete_cql",
    "expire_after_from_duration",
    "expire_after_to_duration",
    "expired_select_cql",
    "head_in_buckets_select_cql",
    "heads_select_args",
    "heads_select_cql",
    "ids_select_cql",
    "insert_cql",
    "journal_head_from_row",
    "journal_head_values",
    "partitions_select_cql",
    "update_cql",
    "update_shapes",
]

_NANOS_PER_DAY: Final = 86_400_000_000_000

METAJOURNAL = TableDef(
    columns=cql_columns(
        "id text, topic text, segment bigint, partition int, offset bigint, segment_size int,"
        " seq_nr bigint, delete_to bigint, created timestamp, created_date date, updated timestamp,"
        " expire_after duration, expire_on date, record_id uuid, origin text,"
        " properties map<text, text>, metadata text"
    ),
    partition_key=("topic", "segment"),
    clustering=("id",),
    indexes=("created_date", "expire_on"),
)

HEAD_COLUMNS: Final = (
    "partition",
    "offset",
    "segment_size",
    "seq_nr",
    "delete_to",
    "expire_after",
    "expire_on",
    "record_id",
)


def head_in_buckets_select_cql(tables: TableNames) -> str:
    """The heads of one journal in the buckets listed (the current layout's and the old one's:
    one request for both), each row led by its bucket; binds (topic, [segments], id)."""
    columns = ("segment", *HEAD_COLUMNS)
    where = "topic = ? AND segment IN ? AND id = ?"
    return cql.select(tables.qualified(tables.metajournal), columns, where)


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
    """A `HEAD_COLUMNS` row as a JournalHead."""
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
    """`HEAD_COLUMNS` bind values for a head (absent ones UNSET)."""
    expiry = head.expiry
    return (
        head.partition_offset.partition,
        head.partition_offset.offset,
        head.segment_size,
        head.seq_nr,
        unset_if_none(head.delete_to),
        UNSET_VALUE if expiry is None else expire_after_to_duration(expiry.after),
        UNSET_VALUE if expiry is None else expiry.on,
        unset_if_none(head.record_id),
    )


def _as_date(value: Date | date) -> date:
    return value if isinstance(value, date) else value.date()


HEAD_INSERT_COLUMNS: Final = (
    "topic",
    "segment",
    "id",
    *HEAD_COLUMNS,
    "created",
    "created_date",
    "updated",
    "origin",
)


HEAD_LOOKUP_GROUP = 16
"""Journals per `heads_select_cql` query; measured on the local node, larger groups gain nothing."""


def heads_select_cql(tables: TableNames) -> str:
    """Heads of many journals of one topic at once; binds (topic, [segments], [ids]).

    Columns: segment, id, then `HEAD_COLUMNS`.
    """
    columns = ("segment", "id", *HEAD_COLUMNS)
    where = "topic = ? AND segment IN ? AND id IN ?"
    return cql.select(tables.qualified(tables.metajournal), columns, where)


def heads_select_args(
    keys: Sequence[Key], buckets: Sequence[Collection[int]]
) -> list[tuple[str, list[int], list[str]]]:
    """`heads_select_cql`'s bind values for the heads of `keys`, each looked for in its
    `buckets`: one query per topic and `HEAD_LOOKUP_GROUP` journals, each bucket and id once."""
    by_topic: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        by_topic.setdefault(key.topic, []).append(index)
    args = []
    for topic, indexes in by_topic.items():
        for start in range(0, len(indexes), HEAD_LOOKUP_GROUP):
            group = indexes[start : start + HEAD_LOOKUP_GROUP]
            segments = sorted({bucket for index in group for bucket in buckets[index]})
            ids = list(dict.fromkeys(keys[index].id for index in group))
            args.append((topic, segments, ids))
    return args


def insert_cql(tables: TableNames) -> str:
    """A new head; binds `HEAD_INSERT_COLUMNS`."""
    return cql.insert(tables.qualified(tables.metajournal), HEAD_INSERT_COLUMNS)


def delete_cql(tables: TableNames) -> str:
    """One head; binds (topic, segment, id)."""
    return cql.delete(tables.qualified(tables.metajournal), "topic = ? AND segment = ? AND id = ?")


def partitions_select_cql(tables: TableNames) -> str:
    """Every (topic, bucket) partition of the table: one scan of partition keys, which tells the
    buckets a topic uses without a query per bucket."""
    return cql.select(tables.qualified(tables.metajournal), "DISTINCT topic, segment")


def ids_select_cql(tables: TableNames) -> str:
    """The ids of one bucket of a topic; binds (topic, segment)."""
    return cql.select(tables.qualified(tables.metajournal), "id", "topic = ? AND segment = ?")


def expired_select_cql(tables: TableNames) -> str:
    """The ids of a topic's journals whose head has one `expire_on` date, in either bucket layout;
    binds (expire_on, topic).

    Through the `expire_on` index (the one kafka-journal's `PurgeExpired` selects by), filtered
    by topic: one query per date whatever the number of buckets.
    """
    where = "expire_on = ? AND topic = ? ALLOW FILTERING"
    return cql.select(tables.qualified(tables.metajournal), "id", where)


# (seq_nr set, delete_to and expiry: 0 untouched / 1 set / 2 removed)
HeadUpdate = tuple[bool, int, int]


def update_shapes() -> list[HeadUpdate]:
    """Every shape of head UPDATE (so a writer can prepare them all up front). Removing delete_to
    is the check's repair's alone (the replicator never moves it back)."""
    return list(itertools.product((False, True), range(3), range(3)))


def update_cql(tables: TableNames, shape: HeadUpdate) -> str:
    """Move a head to a new position; binds partition, offset, updated, then the shape's values
    (seq_nr, delete_to, expire_after and expire_on), then (topic, segment, id)."""
    seq, delete_to, expiry = shape
    sets = ["partition = ?", "offset = ?", "updated = ?"]
    if seq:
        sets.append("seq_nr = ?")
    if delete_to == 1:
        sets.append("delete_to = ?")
    elif delete_to == 2:
        sets.append("delete_to = null")
    if expiry == 1:
        sets += ["expire_after = ?", "expire_on = ?"]
    elif expiry == 2:
        sets += ["expire_after = null", "expire_on = null"]
    return (
        f"UPDATE {tables.qualified(tables.metajournal)} SET {', '.join(sets)} "
        "WHERE topic = ? AND segment = ? AND id = ?"
    )


@dataclass(frozen=True, slots=True)
class StoreStatements:
    """The replicator's store's statements on `metajournal`: one update per `HeadUpdate` shape."""

    select_heads: PreparedStatement
    insert: Binder
    delete: PreparedStatement
    updates: dict[HeadUpdate, Binder]

    @classmethod
    def prepare(cls, prepare: Prepare, tables: TableNames) -> StoreStatements:
        return cls(
            prepare(heads_select_cql(tables)),
            Binder(prepare(insert_cql(tables))),
            prepare(delete_cql(tables)),
            {shape: Binder(prepare(update_cql(tables, shape))) for shape in update_shapes()},
        )

    def bind_insert(
        self, key: Key, bucket: int, head: JournalHead, created: datetime, origin: str | None
    ) -> Statement:
        """A new head; `created` (UTC) is also its `created_date` and first `updated`."""
        values = (key.topic, bucket, key.id, *journal_head_values(head))
        return self.insert.bind((*values, created, created.date(), created, origin))

    def bind_update(self, key: Key, bucket: int, write: UpdateHead) -> Statement:
        expiry = 1 if write.expiry is not None else 2 if write.remove_expiry else 0
        delete_to = 1 if write.delete_to is not None else 2 if write.remove_delete_to else 0
        shape = (write.seq_nr is not None, delete_to, expiry)
        position = write.partition_offset
        values: list[Any] = [position.partition, position.offset, write.updated]
        if write.seq_nr is not None:
            values.append(write.seq_nr)
        if write.delete_to is not None:
            values.append(write.delete_to)
        if write.expiry is not None:
            values += [expire_after_to_duration(write.expiry.after), write.expiry.on]
        return self.updates[shape].bind((*values, key.topic, bucket, key.id))

    def bind_delete(self, key: Key, bucket: int) -> Statement:
        return self.delete.bind((key.topic, bucket, key.id))
