"""The reader's parameters; bodies are the shared ones of kjournal.api.schemas, the journal path
parameters those of kjournal_service.params."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
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
    "PointerOut",
    "ReplicationOut",
    "ToQuery",
]

FromQuery = Annotated[
    int, Query(alias="from", ge=1, le=SEQ_NR_MAX, description="first seqNr to return")
]
ToQuery = Annotated[int, Query(ge=1, le=SEQ_NR_MAX, description="last seqNr to return")]
LimitQuery = Annotated[int | None, Query(ge=1, description="return at most this many events")]
