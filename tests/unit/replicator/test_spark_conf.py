"""The Spark conf the job sets, per master."""

from __future__ import annotations

import pytest
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.spark import LOCAL_DRIVER_JAVA_OPTIONS, spark_conf


def test_local_mode_runs_the_driver_jvm_on_c1_only() -> None:
    conf = spark_conf(ReplicatorSettings(), "local[2]", [])
    assert conf["spark.driver.extraJavaOptions"] == LOCAL_DRIVER_JAVA_OPTIONS
    assert "-XX:TieredStopAtLevel=1" in LOCAL_DRIVER_JAVA_OPTIONS.split()
    assert conf["spark.python.worker.reuse"] == "true"
    assert "spark.jars" not in conf


@pytest.mark.parametrize("master", ["k8s://https://kubernetes.default.svc", None])
def test_cluster_and_spark_submit_masters_keep_the_jvm_defaults(master: str | None) -> None:
    conf = spark_conf(ReplicatorSettings(), master, ["/jars/a.jar", "/jars/b.jar"])
    assert "spark.driver.extraJavaOptions" not in conf
    assert conf["spark.jars"] == "/jars/a.jar,/jars/b.jar"


def test_configured_conf_wins_over_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "KJOURNAL_SPARK__CONF",
        '{"spark.driver.extraJavaOptions": "-Xss4m", "spark.python.worker.reuse": "false"}',
    )
    conf = spark_conf(ReplicatorSettings(), "local[2]", [])
    assert conf["spark.driver.extraJavaOptions"] == "-Xss4m"
    assert conf["spark.python.worker.reuse"] == "false"
