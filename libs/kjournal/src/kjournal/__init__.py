"""kjournal: an event-sourcing journal on Kafka with a Cassandra eventual store.

The names a user needs, from one place:

    from kjournal import Client, Event, JsonPayload, Key, SeqNr

    with Client(writer_url="http://127.0.0.1:8081", reader_url="http://127.0.0.1:8082") as client:
        client.append(Key("journal", "order-1"), [Event(SeqNr(1), payload=JsonPayload({"a": 1}))])

The values and errors are imported with the package; `Journals` and `Journal` (the in-process
journal, which needs the `kafka` extra) and the HTTP clients on first use, so `import kjournal`
never loads a database driver. Subpackages (`kjournal.model`, `kjournal.client`,
`kjournal.cassandra`, ...) hold the rest; docs/architecture.md maps them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kjournal.errors import (
    CassandraUnavailable,
    DataIntegrityError,
    DeadlineExceeded,
    EmptyAppend,
    FormatError,
    HeaderFormatError,
    InvalidDuration,
    InvalidInput,
    InvalidKey,
    InvalidPayload,
    InvalidSeqNr,
    JournalNotFound,
    JournalQuarantined,
    KafkaUnavailable,
    KJournalError,
    MicroBatchError,
    NestedTooDeeply,
    NotConfigured,
    OutcomeUnknown,
    PartitionCountChanged,
    PayloadFormatError,
    ReadsNotConfigured,
    RecordTooLarge,
    SchemaError,
    SeqNrOrderError,
    SliceTimeout,
    SparkJarsNotFound,
    TooManyEvents,
    TopicRepartitioned,
    Unavailable,
    UnknownTopic,
    WritesNotConfigured,
)
from kjournal.model import (
    AppendResult,
    BinaryPayload,
    Event,
    EventRecord,
    Events,
    ExpireAfter,
    HeaderMetadata,
    JournalStatus,
    JsonPayload,
    Key,
    PartitionOffset,
    Payload,
    PayloadMetadata,
    PayloadType,
    RecordMetadata,
    SeqNr,
    SeqRange,
    TextPayload,
)

if TYPE_CHECKING:
    from kjournal.client import AsyncClient, Client, MarkResult, RetryPolicy
    from kjournal.journal import Journal, Journals
    from kjournal.kafka.settings import KafkaSettings

_LAZY = {
    "AsyncClient": "kjournal.client",
    "Client": "kjournal.client",
    "Journal": "kjournal.journal",
    "Journals": "kjournal.journal",
    "KafkaSettings": "kjournal.kafka.settings",
    "MarkResult": "kjournal.client",
    "RetryPolicy": "kjournal.client",
}

__all__ = [
    "AppendResult",
    "AsyncClient",
    "BinaryPayload",
    "CassandraUnavailable",
    "Client",
    "DataIntegrityError",
    "DeadlineExceeded",
    "EmptyAppend",
    "Event",
    "EventRecord",
    "Events",
    "ExpireAfter",
    "FormatError",
    "HeaderFormatError",
    "HeaderMetadata",
    "InvalidDuration",
    "InvalidInput",
    "InvalidKey",
    "InvalidPayload",
    "InvalidSeqNr",
    "Journal",
    "JournalNotFound",
    "JournalQuarantined",
    "JournalStatus",
    "Journals",
    "JsonPayload",
    "KJournalError",
    "KafkaSettings",
    "KafkaUnavailable",
    "Key",
    "MarkResult",
    "MicroBatchError",
    "NestedTooDeeply",
    "NotConfigured",
    "OutcomeUnknown",
    "PartitionCountChanged",
    "PartitionOffset",
    "Payload",
    "PayloadFormatError",
    "PayloadMetadata",
    "PayloadType",
    "ReadsNotConfigured",
    "RecordMetadata",
    "RecordTooLarge",
    "RetryPolicy",
    "SchemaError",
    "SeqNr",
    "SeqNrOrderError",
    "SeqRange",
    "SliceTimeout",
    "SparkJarsNotFound",
    "TextPayload",
    "TooManyEvents",
    "TopicRepartitioned",
    "Unavailable",
    "UnknownTopic",
    "WritesNotConfigured",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kjournal' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
