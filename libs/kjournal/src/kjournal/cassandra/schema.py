"""Keyspace creation and schema migrations (placeholder until the journal core lands)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]{0,47}$")


@dataclass(frozen=True)
class SchemaSettings:
    keyspace: str = "journal"
    replication: str = "{'class': 'SimpleStrategy', 'replication_factor': 1}"

    def __post_init__(self) -> None:
        if not _NAME.match(self.keyspace):
            raise ValueError(f"invalid keyspace name {self.keyspace!r}")


def migrate(session: Any, settings: SchemaSettings) -> int:
    """Create the keyspace; returns the schema version now recorded (0 for the placeholder)."""
    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {settings.keyspace} WITH replication = {settings.replication}"
    )
    return 0
