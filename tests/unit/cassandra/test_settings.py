"""CassandraSettings: defaults, parsing, refusals; the schema steps' list."""

from __future__ import annotations

import pytest
from kjournal.cassandra.schema import KJOURNAL_SCHEMA_VERSION
from kjournal.cassandra.schema import SCALA_SCHEMA_VERSION
from kjournal.cassandra.schema import SCALA_STEPS
from kjournal.cassandra.session import READ_PROFILE
from kjournal.cassandra.session import SCHEMA_PROFILE
from kjournal.cassandra.session import WRITE_PROFILE
from kjournal.cassandra.session import build_cluster
from kjournal.cassandra.settings import CassandraReplication
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import CassandraTables
from kjournal.cassandra.settings import Consistency
from kjournal.cassandra.settings import TableNames
from pydantic import ValidationError


def test_defaults_match_the_scala_library():
    settings = CassandraSettings()

    assert settings.keyspace == "journal"
    assert settings.tables == CassandraTables(
        journal="journal", metajournal="metajournal", pointer2="pointer2", setting="setting"
    )
    assert settings.read_consistency is Consistency.LOCAL_QUORUM
    assert settings.write_consistency is Consistency.LOCAL_QUORUM
    assert settings.fetch_size == 1000
    assert settings.segment_size == 10_000
    assert settings.protocol_version == 5


def test_contact_points_from_a_comma_separated_string():
    settings = CassandraSettings.model_validate({"contact_points": "10.0.0.1, 10.0.0.2,"})

    assert settings.contact_points == ("10.0.0.1", "10.0.0.2")


def test_credentials_come_in_pairs_and_stay_secret():
    with pytest.raises(ValidationError, match="both username and password"):
        CassandraSettings(username="reader")
    settings = CassandraSettings.model_validate({"username": "reader", "password": "s3cret"})
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize("name", ["", "1abc", "with-dash", "Upper", "x" * 49])
def test_invalid_names_are_refused(name: str):
    with pytest.raises(ValidationError):
        CassandraSettings(keyspace=name)
    with pytest.raises(ValidationError):
        CassandraTables(journal=name)


def test_table_names_must_be_distinct():
    with pytest.raises(ValidationError, match="distinct"):
        CassandraTables(pointer2="journal")


def test_replication_shapes():
    assert CassandraReplication().strategy == "SimpleStrategy"
    with pytest.raises(ValidationError, match="data_centers"):
        CassandraReplication(strategy="NetworkTopologyStrategy")
    with pytest.raises(ValidationError, match="only apply"):
        CassandraReplication(data_centers={"dc1": 3})
    ok = CassandraReplication(strategy="NetworkTopologyStrategy", data_centers={"dc1": 3})
    assert ok.data_centers == {"dc1": 3}


def test_table_names_from_cassandra_settings():
    settings = CassandraSettings(keyspace="ks1", tables=CassandraTables(journal="events"))

    names = settings.names

    assert names == TableNames(keyspace="ks1", journal="events")
    assert names.qualified(names.journal) == "ks1.events"
    with pytest.raises(ValidationError, match="invalid Cassandra name"):
        CassandraSettings(keyspace="bad-name")


def test_the_scala_migration_list_ends_at_version_8():
    assert SCALA_SCHEMA_VERSION == 8
    assert KJOURNAL_SCHEMA_VERSION == 2
    assert [step.description for step in SCALA_STEPS] == [
        "add headers map<text, text>",
        "add version text",
        "drop table metadata",
        "create table pointer2",
        "add meta_record_id uuid",
        "add record_id uuid",
        "drop table pointer",
        "drop table metadata",
        "drop table pointer",
    ]


def test_the_cluster_uses_execution_profiles_only():
    cluster = build_cluster(CassandraSettings(local_dc="dc1"))
    try:
        profiles = cluster.profile_manager.profiles
        for name in (READ_PROFILE, WRITE_PROFILE, SCHEMA_PROFILE):
            assert profiles[name].load_balancing_policy is not None
    finally:
        cluster.shutdown()
