"""The Spark session and the streaming query: Kafka source by pattern → foreachBatch."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kjournal.errors import MicroBatchError
from pyspark.sql import DataFrame
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from kjournal_replicator.jars import kafka_source_jars
from kjournal_replicator.jars import spark_jars_dir
from kjournal_replicator.kafka_source import kafka_offsets
from kjournal_replicator.kafka_source import source_options
from kjournal_replicator.micro_batch import MicroBatchHandler
from kjournal_replicator.ranges import OffsetRange
from kjournal_replicator.settings import ReplicatorSettings

__all__ = [
    "LOCAL_DRIVER_JAVA_OPTIONS",
    "LOG4J2_PROPERTIES",
    "QUERY_NAME",
    "build_spark",
    "driver_java_options",
    "read_ranges",
    "spark_conf",
    "start_query",
]

log = logging.getLogger(__name__)

QUERY_NAME = "kjournal-replicator"

LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
"""In local mode the one JVM (driver and executor) shares the cores with the Python workers that
do the replication, and its own share of the work is small (planning micro-batches, reading
Kafka, handing rows over). HotSpot's C2 compiler kept compiling Spark's code for minutes after a
start: 12.8 core-seconds in the bench's steady minute (a fifth of a core), against under one for
C1 alone, which ran the JVM's part of that minute in two thirds of the CPU. With C1 only the
bench's sustained throughput went 22 100 → 23 000-26 100 events/s and its p99 latency 0.91 →
0.64-0.66 s. Override with `spark.driver.extraJavaOptions` in `KJOURNAL_SPARK__CONF`."""


LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
"""The driver JVM's logging: Spark's defaults without its per-batch trigger warning."""


def driver_java_options(master: str | None) -> str | None:
    """The driver JVM's options; None under spark-submit, whose JVM already runs."""
    if master is None:
        return None
    options = [f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES}"]
    if _is_local(master):
        options.append(LOCAL_DRIVER_JAVA_OPTIONS)
    return " ".join(options)


def _jars(settings: ReplicatorSettings) -> list[str]:
    folder = settings.spark.jars_dir
    if folder is None:
        # spark-submit's --jars (or $SPARK_HOME/jars) must hold the Kafka source; if not,
        # readStream.format("kafka") fails at start-up.
        log.warning("no KJOURNAL_SPARK__JARS_DIR: relying on jars given to spark-submit")
        return []
    provided = spark_jars_dir()
    jars = kafka_source_jars(Path(folder), provided.glob("*.jar") if provided else ())
    return [str(jar) for jar in jars]


def _under_spark_submit() -> bool:
    """Whether spark-submit started this Python process (its JVM exports the gateway port)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def build_spark(settings: ReplicatorSettings) -> SparkSession:
    spark_settings = settings.spark
    builder = SparkSession.builder.appName(spark_settings.app_name)
    # spark-submit's --master (and its --conf) must win over our local default.
    master = None if _under_spark_submit() else spark_settings.master
    if master:
        builder = builder.master(master)
    if _is_local(master) and "PYSPARK_PYTHON" not in os.environ:
        # Local workers must run this interpreter (its virtualenv has kjournal), not `python3`;
        # PySpark's SparkContext reads only the environment variable (not spark.pyspark.python).
        os.environ["PYSPARK_PYTHON"] = sys.executable
    for key, value in spark_conf(settings, master, _jars(settings)).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def spark_conf(settings: ReplicatorSettings, master: str | None, jars: list[str]) -> dict[str, str]:
    """The Spark conf the job sets; `KJOURNAL_SPARK__CONF` entries win over every default."""
    spark_settings = settings.spark
    conf: dict[str, str] = {
        "spark.ui.enabled": str(spark_settings.ui_enabled).lower(),
        "spark.sql.shuffle.partitions": str(spark_settings.shuffle_partitions),
        "spark.ui.showConsoleProgress": "false",
        # Streaming disables it anyway (with a warning per query).
        "spark.sql.adaptive.enabled": "false",
        # Workers keep their Cassandra session between tasks (apply.py).
        "spark.python.worker.reuse": "true",
    }
    if jars:
        conf["spark.jars"] = ",".join(jars)
    if (java_options := driver_java_options(master)) is not None:
        conf["spark.driver.extraJavaOptions"] = java_options
    conf.update(spark_settings.conf)
    return conf


def _is_local(master: str | None) -> bool:
    return (master or "").startswith("local")


def start_query(
    spark: SparkSession,
    settings: ReplicatorSettings,
    starting_offsets: str,
    handler: MicroBatchHandler,
) -> StreamingQuery:
    reader = (
        spark.readStream.format("kafka")
        .options(**source_options(settings.kafka, settings.spark))
        .option("subscribePattern", settings.topics.anchored)
        .option("includeHeaders", "true")
        .option("startingOffsets", starting_offsets)
        # A deleted topic must not stop the others (Spark fails the query on its partitions'
        # disappearance otherwise, and again from the checkpoint after every restart). Offsets
        # are still never skipped: each task checks where its slice really starts (apply.py),
        # and a range planned past pointer2 + 1 is read again first (micro_batch.py).
        .option("failOnDataLoss", "false")
    )
    if settings.spark.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(settings.spark.max_offsets_per_trigger))
    interval_ms = int(settings.spark.trigger_interval_s * 1000)
    return (
        reader.load()
        .writeStream.queryName(QUERY_NAME)
        .foreachBatch(handler)
        .option("checkpointLocation", settings.spark.checkpoint_location)
        .trigger(processingTime=f"{interval_ms} milliseconds")
        .start()
    )


def read_ranges(
    spark: SparkSession, settings: ReplicatorSettings, ranges: Sequence[OffsetRange]
) -> DataFrame:
    """A batch read of exactly these Kafka offset ranges, one Spark partition per Kafka
    partition. Offsets Kafka no longer holds are refused here, in one line, rather than by the
    source's data-loss check (failOnDataLoss) mid-read."""
    partitions: dict[str, list[int]] = {}
    for offsets in ranges:
        partitions.setdefault(offsets.topic, []).append(offsets.partition)
    held = kafka_offsets(settings.kafka, partitions)
    for offsets in ranges:
        found = held.get((offsets.topic, offsets.partition))
        beginning = offsets.until_offset if found is None else found.beginning
        if beginning > offsets.from_offset:
            raise MicroBatchError(
                f"{offsets.topic}:{offsets.partition}: offsets {offsets.from_offset}.."
                f"{min(beginning, offsets.until_offset) - 1} are no longer in Kafka (deleted by "
                "retention before they were replicated); refusing to skip them (delete the "
                "checkpoint to resume from pointer2, or set KJOURNAL_APPLY__FAIL_ON_GAP=false to "
                "accept the loss)"
            )
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for offsets in ranges:
        starting.setdefault(offsets.topic, {})[str(offsets.partition)] = offsets.from_offset
        ending.setdefault(offsets.topic, {})[str(offsets.partition)] = offsets.until_offset
    assign = {topic: sorted(int(p) for p in partitions) for topic, partitions in starting.items()}
    return (
        spark.read.format("kafka")
        .options(**source_options(settings.kafka, settings.spark))
        .option("assign", json.dumps(assign))
        .option("includeHeaders", "true")
        .option("startingOffsets", json.dumps(starting))
        .option("endingOffsets", json.dumps(ending))
        .option("failOnDataLoss", "true")
        .load()
    )
