"""Key: the identity of a journal, (topic, id). Many journals share one topic."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kjournal.errors import InvalidKey

# Kafka's own topic rules: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def validate_topic(topic: str) -> str:
    if not isinstance(topic, str) or not _TOPIC.match(topic) or topic in (".", ".."):
        raise InvalidKey(
            f"invalid topic {topic!r}: use 1 to 249 characters of letters, digits, '.', '_', '-'"
        )
    return topic


@dataclass(frozen=True, slots=True)
class Key:
    """`topic:id`. The id is the Kafka record key (UTF-8); it must not be empty."""

    topic: str
    id: str

    def __post_init__(self) -> None:
        validate_topic(self.topic)
        if not isinstance(self.id, str) or not self.id:
            raise InvalidKey("journal id must be a non-empty string")

    def __str__(self) -> str:
        return f"{self.topic}:{self.id}"
