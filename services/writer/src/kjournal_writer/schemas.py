"""The writer's parameters; bodies are the shared ones of kjournal.api.schemas, the journal path
parameters those of kjournal_service.params."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import AppendResponse
from kjournal.api.schemas import MarkRequest
from kjournal.api.schemas import MarkResponse
from kjournal.api.schemas import PositionOut
from kjournal.model import SEQ_NR_MAX
from kjournal_service.params import IdPath
from kjournal_service.params import TopicPath

__all__ = [
    "AppendRequest",
    "AppendResponse",
    "IdPath",
    "MarkRequest",
    "MarkResponse",
    "PositionOut",
    "ToQuery",
    "TopicPath",
]

ToQuery = Annotated[int, Query(ge=1, le=SEQ_NR_MAX, description="delete events with seqNr ≤ to")]
