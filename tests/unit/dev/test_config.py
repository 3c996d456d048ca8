"""Pure parts of the local platform tool: settings and Maven project generation."""

from __future__ import annotations

from pathlib import Path

import pytest
from kjournal_dev.artifacts import maven
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError


def test_settings_come_from_kjournal_dev_variables(tmp_path: Path):
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path),
            "KJOURNAL_DEV_KAFKA_PORT": "19092",
            "KJOURNAL_DEV_TOPICS": "journal, journal-b",
            "KJOURNAL_DEV_PARTITIONS": "3",
        }
    )

    assert config.kafka_bootstrap == "127.0.0.1:19092"
    assert config.topics == ("journal", "journal-b")
    assert config.partitions == 3
    assert config.jars_dir == tmp_path / "jars"
    assert config.state_file == tmp_path / "dev" / "state.json"


@pytest.mark.parametrize("raw", ["abc", "0", "-5"])
def test_a_bad_port_is_a_clear_error(raw: str):
    with pytest.raises(DevError, match="KJOURNAL_DEV_KAFKA_PORT"):
        DevConfig.from_env({"KJOURNAL_DEV_KAFKA_PORT": raw})


def test_each_bundle_pins_its_versions():
    assert maven.kafka_bundle().coordinates[0].startswith("org.apache.kafka:kafka_2.13:4.")
    assert maven.cassandra_bundle().coordinates == ("org.apache.cassandra:cassandra-all:5.0.8",)
    spark = maven.spark_kafka_bundle("4.0.0")
    assert spark.coordinates == ("org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0",)
