"""The replicator's driver: start Spark and the query, serve health and metrics, stop cleanly.

    settings = ReplicatorSettings()
    exit_code = Replicator(settings).run()   # blocks until the query ends or SIGTERM

Exit codes: 0 after a requested stop (SIGTERM, SIGINT, `request_stop()`), 1 when the query
failed (the exception is logged), 2 when start-up failed. See docs/replicator.md.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from types import FrameType

from cassandra.cluster import Session
from kjournal.cassandra.credentials import check_cassandra_credentials
from kjournal.cassandra.schema_check import check_schema
from kjournal.cassandra.session import connect
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.errors import CredentialsRefused
from kjournal.kafka.credentials import check_kafka_credentials
from kjournal_service.metrics_prometheus import PrometheusMetrics
from py4j.protocol import Py4JError  # type: ignore[import-untyped]
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from kjournal_replicator.apply import ApplyTask
from kjournal_replicator.http import Health
from kjournal_replicator.http import HttpEndpoint
from kjournal_replicator.kafka_source import matching_partitions
from kjournal_replicator.lag import LagMonitor
from kjournal_replicator.metrics import driver_metrics
from kjournal_replicator.micro_batch import MicroBatchHandler
from kjournal_replicator.micro_batch import MicroBatchStatus
from kjournal_replicator.offsets import Pointer2
from kjournal_replicator.offsets import checkpoint_has_offsets
from kjournal_replicator.offsets import starting_offsets
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.spark import build_spark
from kjournal_replicator.spark import read_ranges
from kjournal_replicator.spark import start_query
from kjournal_replicator.topic_watch import TopicWatch

__all__ = ["Replicator"]

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_QUERY_FAILED = 1
EXIT_START_FAILED = 2
MAX_TOPIC_RESTARTS = 5  # query restarts because the matching topics changed while it started


@dataclass(frozen=True, slots=True)
class _QueryParts:
    """What start-up makes once and every start of the query uses."""

    spark: SparkSession
    handler: MicroBatchHandler
    pointer2: Pointer2


class Replicator:
    def __init__(self, settings: ReplicatorSettings, metrics: PrometheusMetrics | None = None):
        self.settings = settings
        self.metrics = metrics or driver_metrics()
        self.status = MicroBatchStatus()
        self.http: HttpEndpoint | None = None
        self.query: StreamingQuery | None = None
        self._stop = threading.Event()
        self._started = time.time()
        self._watch = TopicWatch()
        self._partitions: dict[str, list[int]] = {}

    def request_stop(self) -> None:
        """Stop after the running micro-batch (thread-safe; what SIGTERM does)."""
        self._stop.set()

    def install_signal_handlers(self) -> None:
        def handle(signum: int, frame: FrameType | None) -> None:
            log.info(
                "received %s: stopping after the running micro-batch", signal.strsignal(signum)
            )
            self.request_stop()

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)

    def health(self) -> Health:
        query = self.query
        try:
            active = query is not None and query.isActive
        except Py4JError:  # the JVM is gone
            active = False
        starting = query is None and not self._stop.is_set()
        summary = self.status.last_summary
        return Health(
            ok=(active or starting) and not self._stop.is_set(),
            detail={
                "query": "active" if active else ("starting" if starting else "stopped"),
                "uptime_s": round(time.time() - self._started, 3),
                "last_batch_id": self.status.last_batch_id,
                "last_batch_finished": self.status.last_finished,
                "last_batch_records": None if summary is None else summary.records,
                "failed_batches": self.status.failures,
            },
        )

    def run(self) -> int:
        with ExitStack() as stack:
            started = self._start(stack)
            if isinstance(started, int):
                return started
            parts, query = started
            for restart in range(1, MAX_TOPIC_RESTARTS + 2):
                self.query = query
                failure = self._wait(query)
                if failure is None:
                    return EXIT_OK
                if (
                    restart > MAX_TOPIC_RESTARTS
                    or not isinstance(failure, StreamingQueryException)
                    or not self._topics_changed()
                ):
                    log.error("the replication query failed: %s", failure)
                    return EXIT_QUERY_FAILED
                # Spark refuses starting offsets that do not name exactly the partitions it
                # finds, so a topic deleted or created between the listing and the first
                # micro-batch fails the query: list again and start it again.
                log.warning(
                    "the matching topics changed while the query started (%s): starting it "
                    "again (%d of at most %d times)",
                    str(failure).splitlines()[0][:300],
                    restart,
                    MAX_TOPIC_RESTARTS,
                )
                try:
                    query = self._start_query(parts)
                except Exception:
                    log.exception("the replicator could not start the query again")
                    return EXIT_START_FAILED
        return EXIT_QUERY_FAILED  # not reached: the loop returns

    def _start(self, stack: ExitStack) -> tuple[_QueryParts, StreamingQuery] | int:
        """The running query and what it was made of, or the exit code when it did not start;
        `stack` closes the rest."""
        settings = self.settings
        if settings.http.enabled:
            self.http = HttpEndpoint(
                settings.http.host, settings.http.port, self.metrics.exposition, self.health
            ).start()
            stack.callback(self.http.close)
        try:
            asyncio.run(check_kafka_credentials(settings.kafka))
            check_cassandra_credentials(settings.cassandra)
        except CredentialsRefused as exc:
            log.error("the replicator cannot start: %s", exc)
            return EXIT_START_FAILED
        try:
            session = connect(settings.cassandra)
            stack.callback(session.cluster.shutdown)
            # Migrations are the schema job's (it holds the DDL rights): only check here.
            check_schema(session, settings.cassandra)
            pointer2 = _store(session, settings).pointer2
            spark = build_spark(settings)
            stack.callback(_stop_spark, spark)
            handler = MicroBatchHandler(
                ApplyTask(settings.cassandra, settings.apply),
                pointer2,
                self.metrics,
                self.status,
                max_tasks=settings.spark.max_tasks or spark.sparkContext.defaultParallelism,
                topics_now=lambda: matching_partitions(settings.kafka, settings.topics).keys(),
                watch=self._watch,
                read_ranges=partial(read_ranges, spark, settings),
            )
            if self._stop.is_set():
                return EXIT_OK
            parts = _QueryParts(spark, handler, pointer2)
            query = self._start_query(parts)
        except Exception:
            log.exception("the replicator could not start")
            return EXIT_START_FAILED
        lag = LagMonitor(
            settings.kafka,
            settings.topics,
            pointer2,
            self.metrics,
            settings.http.lag_interval_s,
            self._watch,
        ).start()
        stack.callback(lag.close)
        return parts, query

    def _start_query(self, parts: _QueryParts) -> StreamingQuery:
        """Start the query from the checkpoint, or (without one) from pointer2 + 1 of every
        partition of every matching topic as Kafka lists them now."""
        settings = self.settings
        self._partitions = matching_partitions(settings.kafka, settings.topics)
        self._watch.now(self._partitions)
        starting = starting_offsets(self._partitions, parts.pointer2)
        checkpoint = settings.spark.checkpoint_location
        resumes = checkpoint_has_offsets(checkpoint)
        if resumes:
            start = f"resuming from the checkpoint at {checkpoint}"
        elif resumes is None:
            start = (
                f"resuming from the checkpoint at {checkpoint} if it holds offsets, "
                f"else at {starting}"
            )
        else:
            start = f"no checkpoint at {checkpoint} yet: starting at {starting}"
        log.info(
            "topics whose whole name matches %r: %s; %s",
            settings.topics.pattern,
            {topic: len(ps) for topic, ps in self._partitions.items()},
            start,
        )
        return start_query(parts.spark, settings, starting, parts.handler)

    def _topics_changed(self) -> bool:
        """Whether the matching partitions differ from those the query was started with (False
        if Kafka cannot tell now)."""
        try:
            return (
                matching_partitions(self.settings.kafka, self.settings.topics) != self._partitions
            )
        except Exception as exc:
            log.warning("listing the matching topics failed: %s", exc)
            return False

    def _wait(self, query: StreamingQuery) -> BaseException | None:
        """Until the query ends or a stop is requested: the query's failure, if it failed."""
        try:
            while query.isActive and not self._stop.is_set():
                query.awaitTermination(1)
            if self._stop.is_set() and query.isActive:
                # Let the running micro-batch finish: stopping interrupts it, and although a replay
                # is safe it is wasted work. A micro-batch starting meanwhile is interrupted.
                if not self.status.idle.wait(self.settings.stop_timeout_s):
                    log.warning("the running micro-batch did not finish in time: interrupting")
                query.stop()
                log.info("stopped after micro-batch %s", self.status.last_batch_id)
            failure: BaseException | None = query.exception()
        except StreamingQueryException as exc:
            failure = exc
        except Py4JError as exc:
            if not self._stop.is_set():
                return RuntimeError(f"lost the Spark JVM: {exc}")
            # A signal sent to the whole process group (a terminal, `timeout`) also stops the
            # JVM, which interrupts the running micro-batch: it is replayed on restart, safely.
            log.warning(
                "the Spark JVM stopped with us; the running micro-batch, if any, is replayed"
            )
            return None
        if failure is None and not self._stop.is_set():
            return RuntimeError("the replication query ended without being asked to")
        return failure


def _stop_spark(spark: SparkSession) -> None:
    try:
        spark.stop()
    except Py4JError as exc:  # the JVM is already gone
        log.debug("stopping Spark: %s", exc)


def _store(session: Session, settings: ReplicatorSettings) -> CassandraReplicatedStore:
    """The driver's store: it only reads pointer2 (starting offsets, gap check, lag)."""
    return CassandraReplicatedStore(session, settings.cassandra.names)
