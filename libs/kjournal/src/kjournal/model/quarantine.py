"""A Kafka record the replicator could not decode, kept for an operator instead of being skipped."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class QuarantinedRecord:
    topic: str
    partition: int
    offset: int
    id: str | None  # the record key; None if it had none
    reason: str
    header: bytes | None  # the raw `journal.action` header
    value: bytes | None
    timestamp: datetime | None  # the record's timestamp
    quarantined_at: datetime
