"""The reader's fold settings (the `fold` section: `KJOURNAL_FOLD__*`)."""

from __future__ import annotations

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

__all__ = ["FoldSettings"]


class FoldSettings(BaseModel):
    """The per-process fold of each journal topic (docs/concurrency.md, "The fold")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        default=True,
        description="follow each topic asked about and answer from its fold; false: every "
        "question reads Cassandra and scans Kafka",
    )
    payload_budget_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=0,
        description="unreplicated append payload bytes the folds keep (beyond them reads go to "
        "Kafka)",
    )
    max_journals_per_partition: int = Field(
        default=20_000, ge=1, description="journals a partition's fold knows before eviction"
    )
    max_fates_per_partition: int = Field(
        default=20_000,
        ge=1,
        description="most recent records per partition whose fate the fold remembers",
    )
    wait_timeout_s: float = Field(
        default=1.0,
        ge=0,
        description="how long a read waits for the fold before reading Cassandra and Kafka itself",
    )
    list_journals: bool = Field(
        default=True,
        description="list a followed topic's journals from Cassandra once, so that a journal "
        "met for the first time that has none starts without its head read (one query per "
        "bucket the topic uses)",
    )
    pointer_poll_interval_s: float = Field(
        default=0.5, gt=0, description="how often pointer2 is read to drop replicated records"
    )
    idle_expiry_s: float = Field(
        default=600.0,
        gt=0,
        description="a topic not asked about for this long stops being followed",
    )
