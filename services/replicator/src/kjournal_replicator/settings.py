"""The replicator's settings: environment variables `KJOURNAL_*`, nested with `__`.

    KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=broker-1:9092
    KJOURNAL_CASSANDRA__CONTACT_POINTS=10.0.0.1,10.0.0.2
    KJOURNAL_SPARK__MASTER=local[2]
    KJOURNAL_SPARK__CHECKPOINT_LOCATION=s3a://bucket/kjournal/replicator
    KJOURNAL_TOPICS__PATTERN=journal.*

docs/replicator.md lists every variable.
"""

from __future__ import annotations

import re
from typing import Self

from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import Consistency
from kjournal.kafka.settings import KafkaSettings
from kjournal_service.settings import ServiceSettings
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

from kjournal_replicator import worker_gc

__all__ = [
    "ApplySettings",
    "DriverHttpSettings",
    "ReplicatorSettings",
    "SparkSettings",
    "TopicSettings",
]


class SparkSettings(BaseModel):
    """The Spark session and the streaming query."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    master: str | None = "local[2]"
    """None leaves the master to spark-submit (`--master k8s://...`)."""
    app_name: str = "kjournal-replicator"
    """The Spark application's name."""
    checkpoint_location: str = "/tmp/kjournal-replicator/checkpoint"
    """Any Hadoop URI Spark can write (local path, s3a://, hdfs://); shared by restarts."""
    trigger_interval_s: float = Field(default=0.2, ge=0)
    """Seconds between micro-batch starts (0: the next one starts as soon as one ends)."""
    max_offsets_per_trigger: int | None = Field(default=200_000, ge=1)
    """Records per micro-batch at most, over all partitions (None: everything available)."""
    jars_dir: str | None = None
    """Folder of the Spark Kafka source jars; default: kjournal-dev's cache, if installed."""
    max_tasks: int | None = Field(default=None, ge=1)
    """Tasks per micro-batch at most (default: Spark's default parallelism, i.e. its cores).
    Kafka partitions are coalesced, never split: each still goes whole to one task."""
    shuffle_partitions: int = Field(default=2, ge=1)
    """spark.sql.shuffle.partitions (the job shuffles nothing)."""
    ui_enabled: bool = False
    """Run the Spark UI."""
    conf: dict[str, str] = Field(default_factory=dict)
    """Extra Spark conf, e.g. KJOURNAL_SPARK__CONF='{"spark.executor.memory": "2g"}'."""
    kafka_options: dict[str, str] = Field(default_factory=dict)
    """Extra Kafka source options (e.g. `kafka.ssl.truststore.location`); some are refused."""

    @field_validator("kafka_options")
    @classmethod
    def _safe_kafka_options(cls, value: dict[str, str]) -> dict[str, str]:
        # These would break what the job relies on: one Spark partition per Kafka partition
        # (minPartitions, maxRecordsPerPartition split ranges), loud data loss, our topics.
        refused = {
            "minpartitions",
            "maxrecordsperpartition",
            "failondataloss",
            "subscribe",
            "subscribepattern",
            "assign",
            "startingoffsets",
            "startingtimestamp",
            "startingoffsetsbytimestamp",
            "includeheaders",
            "maxoffsetspertrigger",
        }
        bad = sorted(key for key in value if key.lower() in refused)
        if bad:
            raise ValueError(f"these Kafka source options are set by the replicator: {bad}")
        return value


class TopicSettings(BaseModel):
    """Which topics to replicate: a regular expression that must match a topic's whole name
    (`journal.*`: every topic whose name starts with "journal"; `journal`: that one topic)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    pattern: str = "journal.*"
    """Regular expression a topic's whole name must match (passed to Spark anchored, as
    ^(?:pattern)$; write it in the syntax common to Java and Python)."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid topic pattern {value!r}: {exc}") from None
        return value

    @property
    def anchored(self) -> str:
        """The pattern as Spark gets it. Spark's Kafka source finds a pattern anywhere in a topic
        name (Scala's `findFirstIn`): anchoring makes its topics exactly those `matches` names."""
        return f"^(?:{self.pattern})$"

    def matches(self, topic: str) -> bool:
        return re.fullmatch(self.pattern, topic) is not None


class ApplySettings(BaseModel):
    """How each executor applies a partition's slice to Cassandra."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    concurrency: int = Field(default=32, ge=1)
    """Cassandra statements in flight per task (the store applies journals concurrently)."""
    retries: int = Field(default=2, ge=0)
    """Re-runs of a slice inside the task after a Cassandra error, before the task fails."""
    retry_backoff_s: float = Field(default=1.0, ge=0)
    """Pause before a slice's re-run, times the attempt number."""
    slice_timeout_s: float = Field(default=300.0, gt=0)
    """A task whose Kafka partitions take longer to apply (retries included) fails."""
    fail_on_gap: bool = True
    """Never jump over offsets Cassandra lacks: read those between pointer2 and a micro-batch's
    start from Kafka again first, and fail on offsets Kafka no longer holds."""
    trace_links: int = Field(default=128, ge=0)
    """With tracing on, the slice span links at most this many produce spans (those of its first
    traced records, in offset order); its record count is an attribute."""
    gc_threshold: int = Field(default=worker_gc.DEFAULT_THRESHOLD, ge=0)
    """First-generation threshold of the workers' garbage collector (0: Python's 700); see
    worker_gc.py."""


class DriverHttpSettings(BaseModel):
    """The driver's /healthz and /metrics endpoint (`KJOURNAL_HTTP__*`, as the HTTP services')."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Serve /healthz and /metrics from the driver."""
    host: str = "0.0.0.0"  # probes and scrapers come from outside the pod
    """Address the driver's endpoint listens on."""
    port: int = Field(default=9400, ge=0, le=65535)
    """The driver endpoint's port (0 picks a free port)."""
    lag_interval_s: float = Field(default=10.0, gt=0)
    """How often the driver measures per-partition lag (end offset vs pointer2)."""


class ReplicatorSettings(ServiceSettings):
    """`KJOURNAL_*` variables, sections nested with `__` (as the writer's and reader's)."""

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
    spark: SparkSettings = Field(default_factory=SparkSettings)
    topics: TopicSettings = Field(default_factory=TopicSettings)
    apply: ApplySettings = Field(default_factory=ApplySettings)
    http: DriverHttpSettings = Field(default_factory=DriverHttpSettings)
    stop_timeout_s: float = Field(default=60.0, ge=0)
    """On SIGTERM, how long to let the running micro-batch finish before stopping the query."""

    @model_validator(mode="after")
    def _no_write_anywhere(self) -> Self:
        # The replicator is the only Cassandra writer: ANY would acknowledge writes no replica
        # holds, and pointer2 would then claim offsets that a read cannot find.
        if self.cassandra.write_consistency is Consistency.ANY:
            raise ValueError("cassandra.write_consistency ANY can lose replicated events")
        return self
