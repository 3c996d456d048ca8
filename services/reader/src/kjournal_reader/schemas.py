"""The reader's parameters; bodies are the shared ones of kjournal.api.schemas, the journal path
parameters those of kjournal_service.params."""

from __future__ import annotations

from typing import Annotated
from typing import Literal

from fastapi import Header
from fastapi import Path
from fastapi import Query
from kjournal.api.schemas import EventOut
from kjournal.api.schemas import FeedEntryOut
from kjournal.api.schemas import JournalIdOut
from kjournal.api.schemas import JournalStatusOut
from kjournal.api.schemas import PointerOut
from kjournal.api.schemas import ReplicationOut
from kjournal.model import SEQ_NR_MAX

__all__ = [
    "AfterQuery",
    "EventOut",
    "FeedEntryOut",
    "FeedFromQuery",
    "FromQuery",
    "HeartbeatQuery",
    "IdPrefixQuery",
    "JournalIdOut",
    "JournalStatusOut",
    "LastEventIdHeader",
    "LimitQuery",
    "OffsetPath",
    "PartitionsQuery",
    "PointerOut",
    "ReplicationOut",
    "TagQuery",
    "ToQuery",
]

FromQuery = Annotated[
    int, Query(alias="from", ge=1, le=SEQ_NR_MAX, description="first seqNr to return")
]
ToQuery = Annotated[int, Query(ge=1, le=SEQ_NR_MAX, description="last seqNr to return")]
LimitQuery = Annotated[int | None, Query(ge=1, description="return at most this many events")]
OffsetPath = Annotated[
    int, Path(ge=0, le=2**63 - 1, description="the Kafka offset of the journal's append")
]

AfterQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        description="resume right after the entry whose `cursor` this is (passed back verbatim); "
        "partitions it does not name start as `from` says",
    ),
]
FeedFromQuery = Annotated[
    Literal["start", "end"],
    Query(
        alias="from",
        description="where partitions the cursor does not name start: the oldest offset Kafka "
        "holds, or the end as of the request",
    ),
]
PartitionsQuery = Annotated[
    str | None,
    Query(
        pattern=r"^(0|[1-9][0-9]{0,9})(,(0|[1-9][0-9]{0,9}))*$",
        description="read only these partitions, comma-separated (default: all)",
    ),
]
TagQuery = Annotated[
    list[str] | None,
    Query(
        description="only events with one of these tags (repeat the parameter for several); "
        "control entries come whatever their tags"
    ),
]
IdPrefixQuery = Annotated[
    str | None,
    Query(
        alias="idPrefix",
        min_length=1,
        description="only journals whose id starts with this",
    ),
]
HeartbeatQuery = Annotated[
    float,
    Query(
        gt=0,
        le=300,
        description="text/event-stream only: seconds without an entry before a heartbeat event",
    ),
]
LastEventIdHeader = Annotated[
    str | None,
    Header(
        alias="Last-Event-ID",
        description="text/event-stream only: the `id` of the last event received, as `after` "
        "(an EventSource sends it when it reconnects; `after` wins if both are given)",
    ),
]
