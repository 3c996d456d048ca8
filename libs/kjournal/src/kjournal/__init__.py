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
from typing import TYPE_CHECKING
from typing import Any

from kjournal.errors import CassandraUnavailable
from kjournal.errors import DataIntegrityError
from kjournal.errors import DeadlineExceeded
from kjournal.errors import EmptyAppend
from kjournal.errors import FormatError
from kjournal.errors import HeaderFormatError
from kjournal.errors import InvalidDuration
from kjournal.errors import InvalidInput
from kjournal.errors import InvalidKey
from kjournal.errors import InvalidPayload
from kjournal.errors import InvalidSeqNr
from kjournal.errors import JournalNotFound
from kjournal.errors import JournalQuarantined
from kjournal.errors import KafkaUnavailable
from kjournal.errors import KJournalError
from kjournal.errors import MicroBatchError
from kjournal.errors import NestedTooDeeply
from kjournal.errors import NotConfigured
from kjournal.errors import OutcomeUnknown
from kjournal.errors import PartitionCountChanged
from kjournal.errors import PayloadFormatError
from kjournal.errors import ReadsNotConfigured
from kjournal.errors import RecordTooLarge
from kjournal.errors import SchemaError
from kjournal.errors import SeqNrOrderError
from kjournal.errors import SliceTimeout
from kjournal.errors import SparkJarsNotFound
from kjournal.errors import TooManyEvents
from kjournal.errors import TopicRepartitioned
from kjournal.errors import Unavailable
from kjournal.errors import UnknownTopic
from kjournal.errors import WritesNotConfigured
from kjournal.model import AppendResult
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JournalStatus
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload

if TYPE_CHECKING:
    from kjournal.client import AsyncClient
    from kjournal.client import Client
    from kjournal.client import MarkResult
    from kjournal.client import RetryPolicy
    from kjournal.journal import Journal
    from kjournal.journal import Journals
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
