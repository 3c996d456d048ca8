"""The replicator's driver: start Spark and the query, serve health and metrics, stop cleanly.

    settings = ReplicatorSettings()
    exit_code = Replicator(settings).run()   # blocks until the query ends or SIGTERM

Exit codes: 0 after a requested stop (SIGTERM, SIGINT, `request_stop()`), 1 when the query
failed (the exception is logged), 2 when start-up failed. See docs/replicator.md.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from contextlib import ExitStack
from types import FrameType

from cassandra.cluster import Session
from kjournal.cassandra.schema import check_schema
from kjournal.cassandra.session import connect
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal_service.metrics_prometheus import PrometheusMetrics
from py4j.protocol import Py4JError  # type: ignore[import-untyped]
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from kjournal_replicator.apply import ApplyTask
from kjournal_replicator.http import Health, HttpEndpoint
from kjournal_replicator.kafka_source import matching_partitions
from kjournal_replicator.lag import LagMonitor
from kjournal_replicator.metrics import driver_metrics
from kjournal_replicator.micro_batch import MicroBatchHandler, MicroBatchStatus
from kjournal_replicator.offsets import starting_offsets
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.spark import build_spark, start_query

__all__ = ["Replicator"]

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_QUERY_FAILED = 1
EXIT_START_FAILED = 2


class Replicator:
    def __init__(self, settings: ReplicatorSettings, metrics: PrometheusMetrics | None = None):
        self.settings = settings
        self.metrics = metrics or driver_metrics()
        self.status = MicroBatchStatus()
        self.http: HttpEndpoint | None = None
        self.query: StreamingQuery | None = None
        self._stop = threading.Event()
        self._started = time.time()

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
            self.query = started
            code = self._wait(started)
        return code

    def _start(self, stack: ExitStack) -> StreamingQuery | int:
        """The running query, or the exit code when it did not start; `stack` closes the rest."""
        settings = self.settings
        if settings.http.enabled:
            self.http = HttpEndpoint(
                settings.http.host, settings.http.port, self.metrics.exposition, self.health
            ).start()
            stack.callback(self.http.close)
        try:
            session = connect(settings.cassandra)
            stack.callback(session.cluster.shutdown)
            # Migrations are the schema job's (it holds the DDL rights): only check here.
            check_schema(session, settings.cassandra)
            pointer2 = _store(session, settings).pointer2
            spark = build_spark(settings)
            stack.callback(_stop_spark, spark)
            partitions = matching_partitions(settings.kafka, settings.topics)
            starting = starting_offsets(partitions, pointer2)
            log.info(
                "topics whose whole name matches %r: %s; starting offsets without a checkpoint: %s",
                settings.topics.pattern,
                {topic: len(ps) for topic, ps in partitions.items()},
                starting,
            )
            handler = MicroBatchHandler(
                ApplyTask(settings.cassandra, settings.apply),
                pointer2,
                self.metrics,
                self.status,
                max_tasks=settings.spark.max_tasks or spark.sparkContext.defaultParallelism,
                topics_now=lambda: matching_partitions(settings.kafka, settings.topics).keys(),
            )
            if self._stop.is_set():
                return EXIT_OK
            query = start_query(spark, settings, starting, handler)
        except Exception:
            log.exception("the replicator could not start")
            return EXIT_START_FAILED
        lag = LagMonitor(
            settings.kafka, settings.topics, pointer2, self.metrics, settings.http.lag_interval_s
        ).start()
        stack.callback(lag.close)
        return query

    def _wait(self, query: StreamingQuery) -> int:
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
            failure = query.exception()
        except StreamingQueryException as exc:
            failure = exc
        except Py4JError as exc:
            if not self._stop.is_set():
                log.error("lost the Spark JVM: %s", exc)
                return EXIT_QUERY_FAILED
            # A signal sent to the whole process group (a terminal, `timeout`) also stops the
            # JVM, which interrupts the running micro-batch: it is replayed on restart, safely.
            log.warning(
                "the Spark JVM stopped with us; the running micro-batch, if any, is replayed"
            )
            return EXIT_OK
        if failure is not None:
            log.error("the replication query failed: %s", failure)
            return EXIT_QUERY_FAILED
        if not self._stop.is_set():
            log.error("the replication query ended without being asked to")
            return EXIT_QUERY_FAILED
        return EXIT_OK


def _stop_spark(spark: SparkSession) -> None:
    try:
        spark.stop()
    except Py4JError as exc:  # the JVM is already gone
        log.debug("stopping Spark: %s", exc)


def _store(session: Session, settings: ReplicatorSettings) -> CassandraReplicatedStore:
    """The driver's store: it only reads pointer2 (starting offsets, gap check, lag)."""
    return CassandraReplicatedStore(session, settings.cassandra.names)
