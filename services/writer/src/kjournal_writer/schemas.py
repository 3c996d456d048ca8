"""The writer's parameters; bodies are the shared ones of kjournal.api.schemas."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from kjournal.api.schemas import (
    SEQ_NR_LIMIT,
    AppendRequest,
    AppendResponse,
    MarkRequest,
    MarkResponse,
    PositionOut,
    ReadinessOut,
    StatusOut,
)

__all__ = [
    "AppendRequest",
    "AppendResponse",
    "IdPath",
    "MarkRequest",
    "MarkResponse",
    "PositionOut",
    "ReadinessOut",
    "StatusOut",
    "ToQuery",
    "TopicPath",
]

TopicPath = Annotated[
    str, Path(description="a journal topic: Kafka's naming rules and the configured prefix")
]
IdPath = Annotated[str, Path(description="the journal id, percent-encoded as one path segment")]
ToQuery = Annotated[int, Query(ge=1, le=SEQ_NR_LIMIT, description="delete events with seqNr ≤ to")]
