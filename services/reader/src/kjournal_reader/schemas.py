"""The reader's parameters; bodies are the shared ones of kjournal.api.schemas."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from kjournal.api.schemas import (
    SEQ_NR_LIMIT,
    EventOut,
    JournalIdOut,
    JournalStatusOut,
    PointerOut,
    ReadinessOut,
    ReplicationOut,
    StatusOut,
)

__all__ = [
    "SEQ_NR_LIMIT",
    "EventOut",
    "FromQuery",
    "IdPath",
    "JournalIdOut",
    "JournalStatusOut",
    "LimitQuery",
    "PointerOut",
    "ReadinessOut",
    "ReplicationOut",
    "StatusOut",
    "ToQuery",
    "TopicPath",
]

TopicPath = Annotated[
    str, Path(description="a journal topic: Kafka's naming rules and the configured prefix")
]
IdPath = Annotated[str, Path(description="the journal id, percent-encoded as one path segment")]
FromQuery = Annotated[
    int, Query(alias="from", ge=1, le=SEQ_NR_LIMIT, description="first seqNr to return")
]
ToQuery = Annotated[int, Query(ge=1, le=SEQ_NR_LIMIT, description="last seqNr to return")]
LimitQuery = Annotated[int | None, Query(ge=1, description="return at most this many events")]
