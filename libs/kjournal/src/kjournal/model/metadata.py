"""Metadata carried by an append: in the record value (payload) and in the action header."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from kjournal.model.expire_after import ExpireAfter
from kjournal.model.payload import JsonValue


@dataclass(frozen=True, slots=True)
class PayloadMetadata:
    """Travels inside the record value: `{"expireAfter": "1 day", "data": ...}`; None = absent."""

    expire_after: ExpireAfter | None = None
    data: JsonValue = None


@dataclass(frozen=True, slots=True)
class HeaderMetadata:
    """Travels inside the `journal.action` header: `{"data": ...}`; None = absent."""

    data: JsonValue = None


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Both halves, as stored in the `journal.metadata` column."""

    header: HeaderMetadata = field(default_factory=HeaderMetadata)
    payload: PayloadMetadata = field(default_factory=PayloadMetadata)


EMPTY_RECORD_METADATA = RecordMetadata()
