"""kjournal-dev's service list: ports, settings handed to each service, readiness probing."""

from __future__ import annotations

from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.platform.services import SERVICES
from kjournal_dev.platform.services import probe


def test_each_service_gets_its_port_and_settings(tmp_path: Path):
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path),
            "KJOURNAL_DEV_WRITER_PORT": "18081",
            "KJOURNAL_DEV_READER_PORT": "18082",
            "KJOURNAL_DEV_REPLICATOR_PORT": "19400",
            "KJOURNAL_DEV_KAFKA_PORT": "19092",
            "KJOURNAL_DEV_TOPICS": "journal-a,journal-b",
            "KJOURNAL_DEV_KEYSPACE": "ks",
        }
    )
    by_name = {spec.name: spec for spec in SERVICES}
    assert list(by_name) == ["writer", "reader", "replicator"]
    writer, reader, replicator = by_name["writer"], by_name["reader"], by_name["replicator"]
    assert writer.url(config) == "http://127.0.0.1:18081"
    assert reader.url(config) == "http://127.0.0.1:18082"
    writer_env = writer.env_of(config, tmp_path / "writer")
    assert writer_env["KJOURNAL_KAFKA__BOOTSTRAP_SERVERS"] == "127.0.0.1:19092"
    assert writer_env["KJOURNAL_HTTP__TOPIC_PREFIX"] == "journal-"
    assert not any(name.startswith("KJOURNAL_CASSANDRA") for name in writer_env)
    assert reader.env_of(config, tmp_path / "reader")["KJOURNAL_CASSANDRA__KEYSPACE"] == "ks"
    replicator_env = replicator.env_of(config, tmp_path / "replicator")
    assert replicator.url(config) == "http://127.0.0.1:19400"
    assert replicator.health_path == "/healthz"
    assert replicator_env["KJOURNAL_SPARK__CHECKPOINT_LOCATION"] == str(
        tmp_path / "replicator" / "checkpoint"
    )
    assert replicator_env["KJOURNAL_TOPICS__PATTERN"] == "(journal\\-a|journal\\-b)"
    assert replicator_env["KJOURNAL_SPARK__JARS_DIR"].startswith(str(tmp_path / "jars"))


def test_a_service_that_does_not_answer_is_not_ready():
    ready, detail = probe("http://127.0.0.1:9", timeout_s=0.5)
    assert not ready
    assert detail.startswith("not answering")


def test_application_topics_and_their_snapshots_are_journal_topics_too(tmp_path: Path):
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path),
            "KJOURNAL_DEV_TOPICS": "journal",
            "KJOURNAL_DEV_APPLICATION_TOPICS": "journal_bank, journal_shop",
        }
    )
    assert config.application_topics == ("journal_bank", "journal_shop")
    assert config.journal_topics == (
        "journal",
        "journal_bank_snapshots",
        "journal_shop_snapshots",
        "journal_bank",
        "journal_shop",
    )
    by_name = {spec.name: spec for spec in SERVICES}
    writer_env = by_name["writer"].env_of(config, tmp_path / "writer")
    assert writer_env["KJOURNAL_HTTP__TOPIC_PREFIX"] == "journal"
    pattern = by_name["replicator"].env_of(config, tmp_path / "replicator")
    assert pattern["KJOURNAL_TOPICS__PATTERN"] == (
        "(journal|journal_bank_snapshots|journal_shop_snapshots|journal_bank|journal_shop)"
    )
    assert DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path)}).application_topics == ()
