"""The Spark conf the job sets, per master."""

from __future__ import annotations

import pytest
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.spark import LOCAL_DRIVER_JAVA_OPTIONS
from kjournal_replicator.spark import LOG4J2_PROPERTIES
from kjournal_replicator.spark import spark_conf

LOGGING = f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES}"


def test_local_mode_runs_the_driver_jvm_on_c1_only() -> None:
    conf = spark_conf(ReplicatorSettings(), "local[2]", [])
    assert conf["spark.driver.extraJavaOptions"].split() == [LOGGING, LOCAL_DRIVER_JAVA_OPTIONS]
    assert "-XX:TieredStopAtLevel=1" in LOCAL_DRIVER_JAVA_OPTIONS.split()
    assert conf["spark.python.worker.reuse"] == "true"
    assert "spark.jars" not in conf


def test_a_cluster_master_keeps_the_jvm_defaults_but_the_logging() -> None:
    conf = spark_conf(
        ReplicatorSettings(), "k8s://https://kubernetes.default.svc", ["/jars/a.jar", "/jars/b.jar"]
    )
    assert conf["spark.driver.extraJavaOptions"] == LOGGING
    assert conf["spark.jars"] == "/jars/a.jar,/jars/b.jar"


def test_under_spark_submit_the_running_jvm_is_left_alone() -> None:
    assert "spark.driver.extraJavaOptions" not in spark_conf(ReplicatorSettings(), None, [])


def test_the_driver_logging_is_spark_s_without_the_trigger_warning() -> None:
    """Spark warns on every micro-batch longer than the trigger interval, idle or not."""
    lines = dict(
        line.split(" = ", 1)
        for line in LOG4J2_PROPERTIES.read_text().splitlines()
        if line and not line.startswith("#")
    )
    loggers = {
        lines[key]: lines[key.removesuffix(".name") + ".level"]
        for key in lines
        if key.startswith("logger.") and key.endswith(".name")
    }
    trigger = "org.apache.spark.sql.execution.streaming.ProcessingTimeExecutor"
    assert loggers[trigger] == "error"
    assert lines["rootLogger.level"] == "warn"
    assert lines["appender.console.target"] == "SYSTEM_ERR"


def test_configured_conf_wins_over_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "KJOURNAL_SPARK__CONF",
        '{"spark.driver.extraJavaOptions": "-Xss4m", "spark.python.worker.reuse": "false"}',
    )
    conf = spark_conf(ReplicatorSettings(), "local[2]", [])
    assert conf["spark.driver.extraJavaOptions"] == "-Xss4m"
    assert conf["spark.python.worker.reuse"] == "false"
