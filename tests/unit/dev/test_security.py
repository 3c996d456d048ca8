"""kjournal-dev's secured platform, the parts that need no running broker or node: generated
credentials kept private, each service handed only its own, the broker's and the node's
configuration, and the least-privilege ACL grants."""

from __future__ import annotations

import stat
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.platform.cassandra_node import cassandra_yaml
from kjournal_dev.platform.kafka_node import server_properties
from kjournal_dev.platform.services import SERVICES
from kjournal_dev.security.cassandra import YAML
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.kafka import acl_grants
from kjournal_dev.security.kafka import scram_arguments
from kjournal_dev.security.kafka import secure_properties
from kjournal_dev.security.tls import LoopbackTls


def _config(tmp_path: Path) -> DevConfig:
    return DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path),
            "KJOURNAL_DEV_SECURE": "true",
            "KJOURNAL_DEV_KAFKA_PORT": "19092",
            "KJOURNAL_DEV_KAFKA_TLS_PORT": "19094",
        }
    )


def test_credentials_are_generated_once_and_private(tmp_path: Path):
    path = tmp_path / "state" / "credentials.json"
    first = Credentials.load_or_generate(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Credentials.load_or_generate(path) == first
    assert len(set(first.secrets())) == 10  # five Kafka principals, five Cassandra roles
    assert all(secret not in repr(first) for secret in first.secrets())


def test_each_service_gets_only_its_own_credentials(tmp_path: Path):
    config = _config(tmp_path)
    credentials = Credentials.load_or_generate(config.credentials_file)
    envs = {spec.name: spec.env_of(config, tmp_path / spec.name) for spec in SERVICES}
    expected = {
        "writer": ("kjournal-writer", None),
        "reader": ("kjournal-reader", "kjournal_reader"),
        "replicator": ("kjournal-replicator", "kjournal_replicator"),
    }
    for name, (principal, role) in expected.items():
        env = envs[name]
        assert env["KJOURNAL_KAFKA__SECURITY_PROTOCOL"] == "SASL_PLAINTEXT"
        assert env["KJOURNAL_KAFKA__SASL_USERNAME"] == principal
        assert env["KJOURNAL_KAFKA__SASL_PASSWORD"] == credentials.kafka[principal]
        assert env.get("KJOURNAL_CASSANDRA__USERNAME") == role
        others = set(credentials.secrets()) - {
            credentials.kafka[principal],
            credentials.cassandra.get(role or "", ""),
        }
        assert not others & set(env.values()), name
    assert envs["writer"]["KJOURNAL_AUTH__ENABLED"] == "true"
    assert envs["reader"]["KJOURNAL_AUTH__ENABLED"] == "true"


def test_the_brokers_configuration(tmp_path: Path):
    config = _config(tmp_path)
    credentials = Credentials.generate()
    tls = LoopbackTls(tmp_path / "tls").ensure(config.host)
    text = server_properties(config, tmp_path / "data", secure_properties(config, credentials, tls))
    properties = dict(line.split("=", 1) for line in text.splitlines())
    assert properties["listeners"] == (
        "SASL_PLAINTEXT://127.0.0.1:19092,SASL_SSL://127.0.0.1:19094,CONTROLLER://127.0.0.1:9093"
    )
    assert properties["allow.everyone.if.no.acl.found"] == "false"
    assert properties["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert properties["ssl.keystore.location"] == str(tls.broker_key_store)
    arguments = scram_arguments(credentials)
    assert arguments.count("--add-scram") == 5
    assert (
        f"SCRAM-SHA-512=[name=kjournal-writer,password={credentials.kafka['kjournal-writer']}]"
        in arguments
    )


def test_least_privilege_grants():
    writer, readers, expiry = acl_grants("journal")
    assert writer.count("--operation") == 2
    assert {"Write", "Describe"} <= set(writer)
    assert "Read" not in writer
    assert {"User:kjournal-reader", "User:kjournal-replicator", "Read", "Describe"} <= set(readers)
    assert "Write" not in readers
    assert {"User:kjournal-expiry", "Read", "Write", "Describe"} <= set(expiry)
    assert expiry.count("--operation") == 3
    assert "User:kjournal-expiry" not in writer + readers
    for grant in (writer, readers, expiry):
        assert grant[-4:] == ["--topic", "journal", "--resource-pattern-type", "prefixed"]
        assert "--group" not in grant  # no consumer group: all assign partitions


def test_the_nodes_configuration(tmp_path: Path):
    config = _config(tmp_path)
    assert "authenticator: AllowAllAuthenticator" in cassandra_yaml(config, tmp_path)
    secured = cassandra_yaml(config, tmp_path, YAML)
    assert "authenticator: PasswordAuthenticator" in secured
    assert "authorizer: CassandraAuthorizer" in secured
    assert "AllowAll" not in secured
