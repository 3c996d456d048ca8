"""The replicator's settings, from the environment."""

from __future__ import annotations

import pytest
from kjournal.cassandra.settings import Consistency
from kjournal_replicator.kafka_source import FETCH_MAX_WAIT_MS
from kjournal_replicator.kafka_source import READ_STALL_TIMEOUT_MS
from kjournal_replicator.kafka_source import source_options
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.settings import SparkSettings
from kjournal_replicator.settings import TopicSettings
from pydantic import ValidationError


def test_defaults() -> None:
    settings = ReplicatorSettings()
    assert settings.spark.master == "local[2]"
    assert settings.topics.pattern == "journal.*"
    assert settings.apply.fail_on_gap


def test_nested_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KJOURNAL_KAFKA__BOOTSTRAP_SERVERS", "broker-1:9092,broker-2:9092")
    monkeypatch.setenv("KJOURNAL_CASSANDRA__CONTACT_POINTS", "10.0.0.1,10.0.0.2")
    monkeypatch.setenv("KJOURNAL_CASSANDRA__WRITE_CONSISTENCY", "QUORUM")
    monkeypatch.setenv("KJOURNAL_SPARK__MAX_OFFSETS_PER_TRIGGER", "5000")
    monkeypatch.setenv("KJOURNAL_SPARK__CONF", '{"spark.executor.memory": "2g"}')
    monkeypatch.setenv("KJOURNAL_APPLY__CONCURRENCY", "8")
    monkeypatch.setenv("KJOURNAL_TOPICS__PATTERN", "journal_orders.*")
    settings = ReplicatorSettings()
    assert settings.kafka.bootstrap_servers == "broker-1:9092,broker-2:9092"
    assert settings.cassandra.contact_points == ("10.0.0.1", "10.0.0.2")
    assert settings.cassandra.write_consistency is Consistency.QUORUM
    assert settings.spark.max_offsets_per_trigger == 5000
    assert settings.spark.conf == {"spark.executor.memory": "2g"}
    assert settings.apply.concurrency == 8
    assert settings.topics.pattern == "journal_orders.*"


def test_contact_points_may_also_be_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KJOURNAL_CASSANDRA__CONTACT_POINTS", '["10.0.0.1", "10.0.0.2"]')
    assert ReplicatorSettings().cassandra.contact_points == ("10.0.0.1", "10.0.0.2")


@pytest.mark.parametrize("option", ["minPartitions", "maxRecordsPerPartition", "failOnDataLoss"])
def test_options_that_break_replication_are_refused(option: str) -> None:
    with pytest.raises(ValidationError, match="set by the replicator"):
        SparkSettings(kafka_options={option: "4"})


def test_write_consistency_any_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KJOURNAL_CASSANDRA__WRITE_CONSISTENCY", "ANY")
    with pytest.raises(ValidationError, match="ANY"):
        ReplicatorSettings()


def test_the_pattern_matches_whole_topic_names() -> None:
    topics = TopicSettings(pattern="journal.*")
    assert topics.matches("journal")
    assert topics.matches("journal_orders")
    assert not topics.matches("my_journal")
    with pytest.raises(ValidationError, match="invalid topic pattern"):
        TopicSettings(pattern="journal[")


def test_source_options_keep_fetch_waits_short_unless_overridden() -> None:
    # Kafka's default 500 ms fetch wait stalled each micro-batch's read by seconds (kafka_source).
    settings = ReplicatorSettings()
    options = source_options(settings.kafka, settings.spark)
    assert options["kafka.fetch.max.wait.ms"] == str(FETCH_MAX_WAIT_MS)
    assert FETCH_MAX_WAIT_MS < 100

    spark = SparkSettings(kafka_options={"kafka.fetch.max.wait.ms": "200"})
    assert source_options(settings.kafka, spark)["kafka.fetch.max.wait.ms"] == "200"


def test_source_options_bound_a_read_that_finds_nothing() -> None:
    # Spark's defaults (120 s poll, 60 s API timeout) held a micro-batch three minutes when its
    # topic was deleted under the read (kafka_source, micro_batch).
    settings = ReplicatorSettings()
    options = source_options(settings.kafka, settings.spark)
    assert options["kafkaConsumer.pollTimeoutMs"] == str(READ_STALL_TIMEOUT_MS)
    assert options["kafka.default.api.timeout.ms"] == str(READ_STALL_TIMEOUT_MS)
    assert READ_STALL_TIMEOUT_MS <= 30_000
    spark = SparkSettings(kafka_options={"kafkaConsumer.pollTimeoutMs": "120000"})
    assert source_options(settings.kafka, spark)["kafkaConsumer.pollTimeoutMs"] == "120000"
