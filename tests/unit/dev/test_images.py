"""The dev Kafka and Cassandra images run with the same settings as kjournal-dev's loopback nodes,
and the Dockerfile sees the whole uv workspace: checks that keep the copies in step."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root
from kjournal_dev.platform import cassandra_node
from kjournal_dev.platform import kafka_node
from kjournal_dev.security import cassandra as security_cassandra

ROOT = find_repo_root()
IMAGES = ROOT / "infra" / "images"


def _config() -> DevConfig:
    return DevConfig.from_env({"KJOURNAL_DEV_HOST": "10.0.0.1"})


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {key: value for key, value in pairs}


def test_kafka_image_uses_the_loopback_brokers_settings():
    ours = _properties((IMAGES / "kafka/server.properties").read_text())
    theirs = _properties(kafka_node.server_properties(_config(), Path("/data")))
    where = {"controller.quorum.voters", "listeners", "advertised.listeners", "log.dirs"}
    assert set(ours) == set(theirs)
    assert {k: v for k, v in ours.items() if k not in where} == {
        k: v for k, v in theirs.items() if k not in where
    }


def test_cassandra_image_uses_the_secured_loopback_nodes_settings():
    """Authentication and authorization included: the dev Cassandra in a cluster requires a
    role, as production does (docs/security.md, Two walls)."""
    template = (IMAGES / "cassandra/cassandra.yaml").read_text()
    ours = yaml.safe_load(
        template.replace("@LISTEN_ADDRESS@", "10.0.0.1").replace("@DATA_DIR@", "/data")
    )
    theirs = yaml.safe_load(
        cassandra_node.cassandra_yaml(_config(), Path("/data"), auth=security_cassandra.YAML)
    )
    assert ours["authenticator"] == "PasswordAuthenticator"
    where = {"listen_address", "rpc_address", "seed_provider", "data_file_directories"}
    where |= {key for key in theirs if key.endswith("_directory")}
    assert set(ours) - set(theirs) == {"broadcast_rpc_address"}  # CQL on every interface
    assert {k: v for k, v in ours.items() if k in theirs and k not in where} == {
        k: v for k, v in theirs.items() if k not in where
    }


def test_cassandra_image_opens_the_same_java_modules():
    lines = (IMAGES / "cassandra/jvm17-server.options").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == list(
        cassandra_node._JPMS_FLAGS
    )


def test_dev_images_log_like_the_loopback_nodes():
    assert (IMAGES / "kafka/log4j2.xml").read_text() == kafka_node._LOG4J2
    assert (IMAGES / "cassandra/logback.xml").read_text() == cassandra_node._LOGBACK


def test_dockerfile_copies_every_workspace_members_manifest():
    """uv resolves the locked workspace from every member's pyproject.toml: a member missing
    from the builder stage breaks every image build."""
    members = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    dirs = sorted(
        path.relative_to(ROOT).as_posix()
        for pattern in members["members"]
        for path in ROOT.glob(pattern)
        if (path / "pyproject.toml").is_file()
    )
    copied = re.findall(r"^COPY (\S+)/pyproject\.toml ", (ROOT / "Dockerfile").read_text(), re.M)
    assert sorted(copied) == dirs


def test_dockerignore_lets_only_the_sources_in():
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line]
    rules = [line for line in lines if not line.startswith("#")]
    assert rules[0] == "*"  # everything else (.cache, .venv, .git, jars) stays out
    assert {"!uv.lock", "!libs/", "!services/", "!infra/images/"} <= set(rules)
