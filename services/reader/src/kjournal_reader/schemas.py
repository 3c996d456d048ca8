"""The reader's parameters; bodies are the shared ones of kjournal.api.schemas, the journal path
parameters those of kjournal_service.params."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from kjournal.api.schemas import (
    EventOut,
    JournalIdOut,
    JournalStatusOut,
    PointerOut,
    ReplicationOut,
)
from kjournal.model import SEQ_NR_MAX

__all__ = [
    "EventOut",
    "FromQuery",
    "JournalIdOut",
    "JournalStatusOut",
    "LimitQuery",
    "OffsetPath",
    "PointerOut",
    "ReplicationOut",
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
