"""JournalHead: what `metajournal` keeps per journal (the replicator's idempotency watermark)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date

from kjournal.model.expire_after import ExpireAfter
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.seq_nr import SeqNr

DEFAULT_SEGMENT_SIZE = 10_000
MIN_SEGMENT_SIZE = 2


@dataclass(frozen=True, slots=True)
class Expiry:
    """When the journal may be purged: `on` = date of (replication time + `after`), in the
    replicator's expiry time zone (UTC unless `CassandraSettings.expiry_time_zone` says)."""

    after: ExpireAfter
    on: date


@dataclass(frozen=True, slots=True)
class JournalHead:
    """One `metajournal` row.

    partition_offset: the Kafka position of the last applied append or delete.
    seq_nr: the last event's seqNr (a delete may raise it).
    delete_to: events ≤ delete_to are deleted; None if nothing was.
    segment_size: fixed when the journal is created.
    record_id: random per incarnation (None for heads created by a delete).
    """

    partition_offset: PartitionOffset
    segment_size: int
    seq_nr: SeqNr
    delete_to: SeqNr | None = None
    expiry: Expiry | None = None
    record_id: uuid.UUID | None = None
