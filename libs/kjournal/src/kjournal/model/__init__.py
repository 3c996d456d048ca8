"""The journal's value types: no I/O, no third-party dependencies."""

from kjournal.model.action import (
    ACTION_HEADER,
    Action,
    ActionHeader,
    ActionRecord,
    Append,
    AppendHeader,
    Delete,
    DeleteHeader,
    Mark,
    MarkHeader,
    Purge,
    PurgeHeader,
)
from kjournal.model.event import Event, EventRecord, Events
from kjournal.model.expire_after import ExpireAfter
from kjournal.model.key import Key, validate_topic
from kjournal.model.metadata import (
    EMPTY_RECORD_METADATA,
    HeaderMetadata,
    PayloadMetadata,
    RecordMetadata,
)
from kjournal.model.partition_offset import Offset, Partition, PartitionOffset
from kjournal.model.payload import (
    BinaryPayload,
    JsonPayload,
    JsonValue,
    Payload,
    PayloadType,
    TextPayload,
)
from kjournal.model.results import AppendOutcome, AppendResult, JournalStatus, Outcome
from kjournal.model.seq_nr import SEQ_NR_MAX, SEQ_NR_MIN, SeqNr, SeqRange, seq_nr

__all__ = [
    "ACTION_HEADER",
    "EMPTY_RECORD_METADATA",
    "SEQ_NR_MAX",
    "SEQ_NR_MIN",
    "Action",
    "ActionHeader",
    "ActionRecord",
    "Append",
    "AppendHeader",
    "AppendOutcome",
    "AppendResult",
    "BinaryPayload",
    "Delete",
    "DeleteHeader",
    "Event",
    "EventRecord",
    "Events",
    "ExpireAfter",
    "HeaderMetadata",
    "JournalStatus",
    "JsonPayload",
    "JsonValue",
    "Key",
    "Mark",
    "MarkHeader",
    "Offset",
    "Outcome",
    "Partition",
    "PartitionOffset",
    "Payload",
    "PayloadMetadata",
    "PayloadType",
    "Purge",
    "PurgeHeader",
    "RecordMetadata",
    "SeqNr",
    "SeqRange",
    "TextPayload",
    "seq_nr",
    "validate_topic",
]
