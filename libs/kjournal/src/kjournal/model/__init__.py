"""The journal's value types: no I/O, no third-party dependencies."""

from kjournal.model.action import ACTION_HEADER
from kjournal.model.action import Action
from kjournal.model.action import ActionHeader
from kjournal.model.action import ActionRecord
from kjournal.model.action import Append
from kjournal.model.action import AppendHeader
from kjournal.model.action import Delete
from kjournal.model.action import DeleteHeader
from kjournal.model.action import Mark
from kjournal.model.action import MarkHeader
from kjournal.model.action import Purge
from kjournal.model.action import PurgeHeader
from kjournal.model.event import Event
from kjournal.model.event import EventRecord
from kjournal.model.event import Events
from kjournal.model.expire_after import ExpireAfter
from kjournal.model.key import Key
from kjournal.model.key import validate_topic
from kjournal.model.metadata import EMPTY_RECORD_METADATA
from kjournal.model.metadata import HeaderMetadata
from kjournal.model.metadata import PayloadMetadata
from kjournal.model.metadata import RecordMetadata
from kjournal.model.partition_offset import Offset
from kjournal.model.partition_offset import Partition
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.payload import BinaryPayload
from kjournal.model.payload import JsonPayload
from kjournal.model.payload import JsonValue
from kjournal.model.payload import Payload
from kjournal.model.payload import PayloadType
from kjournal.model.payload import TextPayload
from kjournal.model.results import AppendOutcome
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus
from kjournal.model.results import Outcome
from kjournal.model.seq_nr import SEQ_NR_MAX
from kjournal.model.seq_nr import SEQ_NR_MIN
from kjournal.model.seq_nr import SeqNr
from kjournal.model.seq_nr import SeqRange
from kjournal.model.seq_nr import seq_nr

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
