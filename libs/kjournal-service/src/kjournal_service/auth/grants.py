"""What a verified token allows: its scopes and, optionally, the topics it may touch; and the
scope each API operation needs (`requires`, declared beside the route)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from typing import TypeVar

__all__ = ["Grant", "Scope", "TopicPatterns", "required_scope", "requires"]


class Scope(StrEnum):
    """Scopes of the API's operations (the token's `scope`, or `scp`, claim)."""

    APPEND = "journal:append"  # appends and marks (writer)
    DELETE = "journal:delete"  # deletes and purges (writer)
    READ = "journal:read"  # events, pointer, head, a topic's journal ids (reader)
    ADMIN = "journal:admin"  # a topic's replication progress (reader)


F = TypeVar("F", bound=Callable[..., Any])
_REQUIRED: dict[Callable[..., Any], Scope] = {}


def requires(scope: Scope) -> Callable[[F], F]:
    """Declare the scope a route's endpoint needs (put it below the route decorator)."""

    def mark(endpoint: F) -> F:
        _REQUIRED[endpoint] = scope
        return endpoint

    return mark


def required_scope(endpoint: Callable[..., Any]) -> Scope | None:
    return _REQUIRED.get(endpoint)


@dataclass(frozen=True, slots=True)
class TopicPatterns:
    """Topic names, and prefixes written `name*` (as Kafka's LITERAL and PREFIXED ACLs)."""

    names: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def parse(cls, patterns: Iterable[str]) -> TopicPatterns:
        names: set[str] = set()
        prefixes: list[str] = []
        for pattern in patterns:
            if pattern.endswith("*"):
                prefixes.append(pattern[:-1])
            elif pattern:
                names.add(pattern)
        return cls(frozenset(names), tuple(prefixes))

    def allow(self, topic: str) -> bool:
        return topic in self.names or any(topic.startswith(prefix) for prefix in self.prefixes)


@dataclass(frozen=True, slots=True)
class Grant:
    """A verified token: who (`subject`), what (`scopes`), where (`topics`; None: any) and until
    when (`expires_at`, seconds since the epoch), and the key that signed it."""

    subject: str | None
    scopes: frozenset[str]
    topics: TopicPatterns | None
    expires_at: float
    key_id: str | None

    def allows_topic(self, topic: str) -> bool:
        return self.topics is None or self.topics.allow(topic)
