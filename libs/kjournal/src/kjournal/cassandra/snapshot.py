"""CassandraSnapshotReader: what the eventual store holds, read as is, for expiry and the check.

Synchronous (the driver's own API, as the replicator's store uses it; the check runs inside Spark
tasks) and read-only: a role with SELECT on the keyspace is enough. Unlike the eventual reader,
nothing is interpreted: heads come with the bucket they sit in (both layouts), and a journal's
rows come whole, duplicates, rows above its seqNr and rows at or below its `delete_to` included,
each with its `meta_record_id`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date
from typing import Any

from cassandra.cluster import Session
from cassandra.query import PreparedStatement

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.segments import METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import OLD_METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.session import READ_PROFILE
from kjournal.cassandra.session import driver_errors
from kjournal.cassandra.session import read_concurrently
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.cassandra.statements import pointer2
from kjournal.check.state import StoredHeads
from kjournal.memory import StoredRow
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Key
from kjournal.model.head import JournalHead

__all__ = ["CassandraSnapshotReader"]


class CassandraSnapshotReader:
    """Heads, rows, pointers and ids as stored (see the module docstring); implements the
    check's `StoreSnapshot` and expiry's `ExpiryStore`."""

    def __init__(
        self,
        session: Session,
        tables: TableNames,
        *,
        java_version: JavaVersion = DEFAULT_JAVA_VERSION,
        concurrency: int = 32,
    ) -> None:
        self._session = session
        self._java_version = java_version
        self._concurrency = concurrency
        with driver_errors("preparing the store's reads"):
            self._pointer2 = session.prepare(pointer2.select_cql(tables))
            self._heads = session.prepare(metajournal.heads_select_cql(tables))
            self._expired = session.prepare(metajournal.expired_select_cql(tables))
            self._ids = session.prepare(metajournal.ids_select_cql(tables))
            self._partitions = session.prepare(metajournal.partitions_select_cql(tables))
            self._rows = session.prepare(journal.select_cql(tables))

    def pointer2(self, topic: str, partition: int) -> int | None:
        with driver_errors(f"reading pointer2 of {topic}:{partition}"):
            row = self._session.execute(
                self._pointer2.bind((topic, partition)), execution_profile=READ_PROFILE
            ).one()
        return None if row is None else int(row[0])

    def stored_heads(self, keys: Sequence[Key]) -> list[StoredHeads]:
        """Each journal's head as readers see it (the current layout's, else the old one's) and
        the buckets holding one: both layouts are read."""
        heads = []
        for key, found in zip(keys, self._heads_by_bucket(keys), strict=True):
            current, old = self._buckets(key.id)
            heads.append(StoredHeads(found.get(current, found.get(old)), tuple(sorted(found))))
        return heads

    def _heads_by_bucket(self, keys: Sequence[Key]) -> list[dict[int, JournalHead]]:
        buckets = [self._buckets(key.id) for key in keys]
        args = metajournal.heads_select_args(keys, buckets)
        found: list[dict[int, JournalHead]] = [{} for _ in keys]
        wanted = {(key.topic, key.id): index for index, key in enumerate(keys)}
        for (topic, _, _), rows in zip(
            args, self._read_all(self._heads, args, "heads"), strict=True
        ):
            for segment, id, *head in rows:
                owner = wanted.get((topic, id))
                if owner is not None and segment in buckets[owner]:
                    found[owner][segment] = metajournal.journal_head_from_row(tuple(head))
        return found

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        """Each journal's head as readers and the replicator see it: the current layout's, else
        the old one's."""
        return [stored.head for stored in self.stored_heads(keys)]

    def expired(self, topic: str, on: date) -> list[str]:
        with driver_errors(f"reading the heads of {topic} expiring on {on}"):
            rows = self._session.execute(
                self._expired.bind((on, topic)), execution_profile=READ_PROFILE
            )
            return sorted({id for (id,) in rows})

    def ids(self, topic: str) -> set[str]:
        """Every journal id with a head in `topic`, in any bucket of either layout: the buckets
        the topic uses (one scan of the table's partition keys), then each of them."""
        with driver_errors(f"listing the metajournal buckets of {topic}"):
            partitions = self._session.execute(
                self._partitions.bind(()), execution_profile=READ_PROFILE
            )
            buckets = sorted({bucket for name, bucket in partitions if name == topic})
        args = [(topic, bucket) for bucket in buckets]
        return {
            id
            for rows in self._read_all(self._ids, args, f"journal ids of {topic}")
            for (id,) in rows
        }

    def rows_of(self, wanted: Sequence[tuple[Key, Sequence[int]]]) -> list[list[StoredRow]]:
        """Every row of each journal in its segments, by segment, seqNr, then timestamp (all
        the segments of all the journals read concurrently)."""
        args = [
            (key.id, key.topic, segment, 1, SEQ_NR_MAX)
            for key, segments in wanted
            for segment in segments
        ]
        pages = iter(self._read_all(self._rows, args, "journal rows"))
        stored: list[list[StoredRow]] = []
        for key, segments in wanted:
            rows_of_key: list[StoredRow] = []
            decoder = journal.EventRowDecoder(key)
            for segment in segments:
                rows = next(pages)
                for row, event in zip(rows, decoder.page(rows), strict=True):
                    record_id = row[journal.META_RECORD_ID_INDEX]
                    rows_of_key.append(
                        StoredRow(
                            event, None if record_id is None else uuid.UUID(record_id), segment
                        )
                    )
            stored.append(rows_of_key)
        return stored

    def _buckets(self, id: str) -> tuple[int, int]:
        return (
            metajournal_bucket(id, METAJOURNAL_BUCKETS, self._java_version),
            metajournal_bucket(id, OLD_METAJOURNAL_BUCKETS, self._java_version),
        )

    def _read_all(
        self, statement: PreparedStatement, args: Sequence[tuple[Any, ...]], what: str
    ) -> list[list[Any]]:
        with driver_errors(f"reading {what}"):
            return read_concurrently(self._session, statement, args, self._concurrency)
