"""The Spark session and the streaming query: Kafka source by pattern → foreachBatch."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from kjournal_replicator.jars import kafka_source_jars, spark_jars_dir
from kjournal_replicator.kafka_source import source_options
from kjournal_replicator.micro_batch import MicroBatchHandler
from kjournal_replicator.settings import ReplicatorSettings

__all__ = ["LOCAL_DRIVER_JAVA_OPTIONS", "QUERY_NAME", "build_spark", "spark_conf", "start_query"]

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
    if _is_local(master):
        conf["spark.driver.extraJavaOptions"] = LOCAL_DRIVER_JAVA_OPTIONS
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
        # that retention deleted before they were replicated still fail it: the micro-batch
        # handler's gap check sees a range start past pointer2 + 1 (micro_batch.py).
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
