"""The Spark session and the streaming query: Kafka source by pattern → foreachBatch."""

from __future__ import annotations

import logging
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from kjournal_replicator.batch import BatchHandler
from kjournal_replicator.jars import default_jars_dir, kafka_source_jars, spark_jars_dir
from kjournal_replicator.kafka_source import source_options
from kjournal_replicator.settings import ReplicatorSettings

__all__ = ["QUERY_NAME", "build_spark", "start_query"]

log = logging.getLogger(__name__)

QUERY_NAME = "kjournal-replicator"


def _jars(settings: ReplicatorSettings) -> list[str]:
    import pyspark

    configured = settings.spark.jars_dir
    folder = None
    if configured:
        from pathlib import Path

        folder = Path(configured)
    else:
        folder = default_jars_dir(pyspark.__version__)
    if folder is None:
        # No folder and no dev tooling: spark-submit's --jars (or $SPARK_HOME/jars) must hold
        # the Kafka source; if not, readStream.format("kafka") fails at start-up.
        log.warning("no KJOURNAL_SPARK__JARS_DIR: relying on jars given to spark-submit")
        return []
    provided = spark_jars_dir()
    jars = kafka_source_jars(folder, provided.glob("*.jar") if provided else ())
    return [str(jar) for jar in jars]


def _under_spark_submit() -> bool:
    """Whether spark-submit started this Python process (its JVM exports the gateway port)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def build_spark(settings: ReplicatorSettings) -> SparkSession:
    spark_settings = settings.spark
    builder = SparkSession.builder.appName(spark_settings.app_name)
    master = spark_settings.master
    if _under_spark_submit():
        # spark-submit's --master (and its --conf) must win over our local default.
        master = None
    elif master:
        builder = builder.master(master)
    conf: dict[str, str] = {
        "spark.ui.enabled": str(spark_settings.ui_enabled).lower(),
        "spark.sql.shuffle.partitions": str(spark_settings.shuffle_partitions),
        "spark.ui.showConsoleProgress": "false",
        # Streaming disables it anyway (with a warning per query).
        "spark.sql.adaptive.enabled": "false",
        # Workers keep their Cassandra session between tasks (apply.py).
        "spark.python.worker.reuse": "true",
    }
    jars = _jars(settings)
    if jars:
        conf["spark.jars"] = ",".join(jars)
    if (master or "").startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # Local workers must run this interpreter (its virtualenv has kjournal), not `python3`;
        # PySpark's SparkContext reads only the environment variable (not spark.pyspark.python).
        os.environ["PYSPARK_PYTHON"] = sys.executable
    conf.update(spark_settings.conf)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def start_query(
    spark: SparkSession,
    settings: ReplicatorSettings,
    starting_offsets: str,
    handler: BatchHandler,
) -> StreamingQuery:
    reader = (
        spark.readStream.format("kafka")
        .options(**source_options(settings.kafka, settings.spark))
        .option("subscribePattern", settings.topics.pattern)
        .option("includeHeaders", "true")
        .option("startingOffsets", starting_offsets)
        # Offsets that retention deleted before we replicated them fail the query.
        .option("failOnDataLoss", "true")
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
