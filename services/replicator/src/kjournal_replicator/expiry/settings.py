"""The expiry job's settings: the Kafka and Cassandra sections (as the replicator's) and its own.

    KJOURNAL_EXPIRY__TOPICS=journal,journal-orders
    KJOURNAL_EXPIRY__MAX_PURGES=1000

Its principal is its own (docs/security.md): Kafka READ, WRITE and DESCRIBE on the journal topics
(it reads tails and produces purges), Cassandra SELECT on the keyspace (it never writes there).
"""

from __future__ import annotations

from typing import Annotated

from kjournal.cassandra.settings import CassandraSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.settings_types import CommaSeparated
from kjournal.settings_types import non_empty
from kjournal_service.settings import ServiceSettings
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

__all__ = ["ExpiryJobSettings", "ExpirySettings"]


class ExpiryJobSettings(BaseModel):
    """What one run does."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    topics: Annotated[tuple[str, ...], CommaSeparated, non_empty("at least one topic")] = (
        "journal",
    )
    """Journal topics whose expired journals are purged (comma-separated)."""
    lookback_days: int = Field(default=30, ge=1, le=3660)
    """Dates looked up, up to today: a journal whose expire_on is older is not found (run the job
    at least that often)."""
    max_purges: int = Field(default=1000, ge=0)
    """Purges produced per topic and run at most; the rest waits for the next run."""


class ExpirySettings(ServiceSettings):
    """`KJOURNAL_*` variables of the expiry job."""

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
    expiry: ExpiryJobSettings = Field(default_factory=ExpiryJobSettings)
