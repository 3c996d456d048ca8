"""Topics and journal ids as they appear in URLs: percent-encoded path segments, checked here.

A topic must follow Kafka's naming rules and start with the configured prefix, so a service
cannot be pointed at topics that are not journals. An id is any non-empty Unicode string up to
a configured length; `/`, `%`, spaces and the like travel percent-encoded (`quote(id, safe="")`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote
from urllib.parse import unquote

from kjournal.errors import InvalidKey
from kjournal.model import Key
from kjournal.model import validate_topic

__all__ = ["KeyRules", "quote_segment"]


def quote_segment(value: str) -> str:
    """`value` as one percent-encoded path segment (every reserved character encoded)."""
    return quote(value, safe="")


def _decode(raw: str, what: str) -> str:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise InvalidKey(f"{what} {raw!r} is not percent-encoded UTF-8") from None


@dataclass(frozen=True, slots=True)
class KeyRules:
    topic_prefix: str = "journal"
    max_id_length: int = 1024

    def topic(self, raw: str) -> str:
        """The topic named by a raw (still percent-encoded) path segment; InvalidKey if not valid."""
        topic = validate_topic(_decode(raw, "topic"))
        if not topic.startswith(self.topic_prefix):
            raise InvalidKey(
                f"topic {topic!r} is not a journal topic: it must start with {self.topic_prefix!r}"
            )
        return topic

    def key(self, raw_topic: str, raw_id: str) -> Key:
        return self.key_in(self.topic(raw_topic), _decode(raw_id, "journal id"))

    def key_in(self, topic: str, id_: str) -> Key:
        """The key of journal `id_` (decoded already: a body's) in a checked `topic`."""
        if not id_:
            raise InvalidKey("journal id must not be empty")
        if len(id_) > self.max_id_length:
            raise InvalidKey(
                f"journal id of {len(id_)} characters exceeds the limit of {self.max_id_length}"
            )
        return Key(topic, id_)
