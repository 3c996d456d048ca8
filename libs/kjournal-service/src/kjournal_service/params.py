"""Path parameters every journal route takes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

__all__ = ["IdPath", "TopicPath"]

TopicPath = Annotated[
    str, Path(description="a journal topic: Kafka's naming rules and the configured prefix")
]
IdPath = Annotated[str, Path(description="the journal id, percent-encoded as one path segment")]
