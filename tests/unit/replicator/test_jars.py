"""Choosing the Kafka source jars Spark lacks."""

from __future__ import annotations

from pathlib import Path

import pytest
from kjournal.errors import SparkJarsNotFound
from kjournal_replicator.jars import kafka_source_jars

BUNDLE = [
    "spark-sql-kafka-0-10_2.13-4.0.0.jar",
    "spark-token-provider-kafka-0-10_2.13-4.0.0.jar",
    "kafka-clients-3.9.0.jar",
    "commons-pool2-2.12.0.jar",
    "scala-library-2.13.15.jar",
    "hadoop-client-api-3.4.1.jar",
    "guava-33.0.0-jre.jar",
]
SPARK = [
    "scala-library-2.13.16.jar",
    "hadoop-client-api-3.4.1.jar",
    "commons-pool-1.5.4.jar",
    "guava-33.0.0-jre.jar",
]


def touch(folder: Path, names: list[str]) -> list[Path]:
    folder.mkdir()
    paths = [folder / name for name in names]
    for path in paths:
        path.touch()
    return paths


def test_only_artifacts_spark_lacks_whatever_their_version(tmp_path: Path) -> None:
    touch(tmp_path / "bundle", BUNDLE)
    provided = touch(tmp_path / "spark", SPARK)
    names = [jar.name for jar in kafka_source_jars(tmp_path / "bundle", provided)]
    assert names == [
        "commons-pool2-2.12.0.jar",
        "kafka-clients-3.9.0.jar",
        "spark-sql-kafka-0-10_2.13-4.0.0.jar",
        "spark-token-provider-kafka-0-10_2.13-4.0.0.jar",
    ]


def test_a_missing_folder_or_source_jar_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SparkJarsNotFound, match="KJOURNAL_SPARK__JARS_DIR"):
        kafka_source_jars(tmp_path / "nowhere")
    touch(tmp_path / "bundle", ["kafka-clients-3.9.0.jar"])
    with pytest.raises(SparkJarsNotFound, match="spark-sql-kafka-0-10"):
        kafka_source_jars(tmp_path / "bundle")
