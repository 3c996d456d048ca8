"""kjournal's images, each started as a container on the host's network against the real loopback
platform (Kafka and Cassandra started by kjournal-dev), with a read-only root file system."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.schema_check import check_schema
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.payload import JsonPayload
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.support.containers import Docker
from tests.support.containers import free_port
from tests.support.containers import http_get
from tests.support.containers import http_post_json
from tests.support.containers import wait_http_ok
from tests.support.platform import cassandra_env
from tests.support.platform import kafka_env
from tests.support.platform import unique_name

pytestmark = [
    pytest.mark.images,
    pytest.mark.kafka,
    pytest.mark.cassandra,
    # The first test of a session may build every image (and a cold machine the base image).
    pytest.mark.timeout(3600),
]

HTTP_IMAGE_BUDGET_MB = 250  # issue 15: the writer and reader images stay under ~250 MB


def _http(port: int) -> dict[str, str]:
    return {"KJOURNAL_HTTP__HOST": "127.0.0.1", "KJOURNAL_HTTP__PORT": str(port)}


def test_writer_image_answers_readyz(docker: Docker, images: dict[str, str], platform: Endpoints):
    port = free_port()
    # Its readiness is Kafka's alone; the reader it asks each append's outcome is not needed here.
    reader = {"KJOURNAL_READER__URL": f"http://127.0.0.1:{free_port()}"}
    with docker.container(
        images["writer"], {**kafka_env(platform), **_http(port), **reader}
    ) as name:
        report = json.loads(wait_http_ok(f"http://127.0.0.1:{port}/readyz", docker, name))
    assert report["status"] == "ready"
    assert report["checks"]["kafka"]["ok"]


def test_reader_image_answers_readyz(docker: Docker, images: dict[str, str], platform: Endpoints):
    port = free_port()
    env = {**kafka_env(platform), **cassandra_env(platform, platform.keyspace), **_http(port)}
    with docker.container(images["reader"], env) as name:
        report = json.loads(wait_http_ok(f"http://127.0.0.1:{port}/readyz", docker, name))
    assert report["status"] == "ready"
    assert report["checks"]["kafka"]["ok"]
    assert report["checks"]["cassandra"]["ok"]


def test_writer_and_reader_images_serve_an_append(
    docker: Docker, images: dict[str, str], platform: Endpoints
):
    topic = platform.topics[0]
    journal = f"images-{uuid.uuid4().hex[:12]}"
    writer_port, reader_port = free_port(), free_port()
    reader_env = {
        **kafka_env(platform),
        **cassandra_env(platform, platform.keyspace),
        **_http(reader_port),
    }
    writer_env = {
        **kafka_env(platform),
        **_http(writer_port),
        "KJOURNAL_READER__URL": f"http://127.0.0.1:{reader_port}",
    }
    with (
        docker.container(images["writer"], writer_env) as writer,
        docker.container(images["reader"], reader_env) as reader,
    ):
        wait_http_ok(f"http://127.0.0.1:{writer_port}/readyz", docker, writer)
        wait_http_ok(f"http://127.0.0.1:{reader_port}/readyz", docker, reader)
        status, answer = http_post_json(
            f"http://127.0.0.1:{writer_port}/v1/journals/{topic}/{journal}/events",
            {"events": [{"seqNr": 1, "payload": {"amount": 5}}]},
        )
        assert status == 201, answer
        status, body = http_get(
            f"http://127.0.0.1:{reader_port}/v1/journals/{topic}/{journal}/events"
        )
    assert status == 200
    events = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert [(e["seqNr"], e["payload"]) for e in events] == [(1, {"amount": 5})]


def test_migrate_image_applies_the_schema_to_a_fresh_keyspace(
    docker: Docker, images: dict[str, str], platform: Endpoints, session: Session
):
    keyspace = unique_name("kjimg")
    env = [f"{k}={v}" for k, v in cassandra_env(platform, keyspace).items()]
    args = [arg for pair in env for arg in ("-e", pair)]
    try:
        first = docker.run(
            "run", "--rm", "--network", "host", "--read-only", *args, images["migrate"], check=False
        )
        assert first.returncode == 0, first.stdout + first.stderr
        check_schema(session, CassandraSettings(keyspace=keyspace))
        again = docker.run(
            "run", "--rm", "--network", "host", "--read-only", *args, images["migrate"], check=False
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"keyspace {keyspace}" in again.stdout
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")


def test_migrate_image_fails_in_one_line_without_cassandra(docker: Docker, images: dict[str, str]):
    env = {
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": "127.0.0.1",
        "KJOURNAL_CASSANDRA__PORT": str(free_port()),
        "KJOURNAL_CASSANDRA__CONNECT_TIMEOUT": "2",
    }
    args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
    result = docker.run("run", "--rm", "--network", "host", *args, images["migrate"], check=False)
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if " ERROR " in line]
    assert len(errors) == 1
    assert "cannot connect to Cassandra" in errors[0]


@pytest.fixture
def replicator_target(platform: Endpoints, session: Session) -> Iterator[tuple[str, str, str]]:
    """(keyspace with the schema, topic, pattern matching only that topic)."""
    keyspace = unique_name("kjimgrep")
    topic = unique_name("journal_img")
    migrate(session, CassandraSettings(keyspace=keyspace))
    asyncio.run(create_topic(platform.kafka_bootstrap, topic, 2))
    yield keyspace, topic, re.escape(topic)
    asyncio.run(delete_topics(platform.kafka_bootstrap, [topic]))
    session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")


async def _append_one(bootstrap: str, key: Key) -> None:
    async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as journals:
        await journals.journal(key).produce([Event(SeqNr(1), payload=JsonPayload({"amount": 7}))])


async def _stored(session: Session, keyspace: str, key: Key) -> list[Event]:
    reader = await CassandraEventualReader.create(session, TableNames(keyspace=keyspace))
    head = await reader.head(key)
    if head is None:
        return []
    return [record.event async for record in reader.events(key, head, SeqNr(1))]


def test_replicator_image_replicates_one_append_in_local_1(
    docker: Docker,
    images: dict[str, str],
    platform: Endpoints,
    session: Session,
    replicator_target: tuple[str, str, str],
):
    keyspace, topic, pattern = replicator_target
    port = free_port()
    env = {
        **kafka_env(platform),
        **cassandra_env(platform, keyspace),
        **_http(port),
        "KJOURNAL_SPARK__MASTER": "local[1]",
        "KJOURNAL_TOPICS__PATTERN": pattern,
    }
    key = Key(topic, f"order-{uuid.uuid4().hex[:8]}")
    with docker.container(images["replicator"], env) as name:
        deadline = time.monotonic() + 240
        while True:
            health = json.loads(wait_http_ok(f"http://127.0.0.1:{port}/healthz", docker, name, 240))
            if health.get("query") == "active":
                break
            assert time.monotonic() < deadline, f"query never active: {health}\n{docker.logs(name)}"
            time.sleep(0.5)
        asyncio.run(_append_one(platform.kafka_bootstrap, key))
        deadline = time.monotonic() + 120
        stored = asyncio.run(_stored(session, keyspace, key))
        while not stored:
            assert time.monotonic() < deadline, f"not replicated:\n{docker.logs(name)}"
            assert docker.running(name), docker.logs(name)
            time.sleep(0.5)
            stored = asyncio.run(_stored(session, keyspace, key))
        exit_code = docker.stop(name)
    assert [e.seq_nr for e in stored] == [SeqNr(1)]
    assert isinstance(stored[0].payload, JsonPayload)
    assert stored[0].payload.value == {"amount": 7}
    assert exit_code == 0  # a requested stop (SIGTERM, as Kubernetes sends it) ends cleanly


@pytest.mark.parametrize(
    "name", ["writer", "reader", "migrate", "replicator", "kafka", "cassandra"]
)
def test_image_runs_as_non_root_with_labels_and_volumes(
    docker: Docker, images: dict[str, str], name: str
):
    config = docker.inspect(images[name])["Config"]
    assert config["User"] == "10001:10001"
    labels = config["Labels"]
    for label in ("version", "revision", "source"):
        assert labels.get(f"org.opencontainers.image.{label}"), label
    assert "/tmp" in config["Volumes"]


@pytest.mark.parametrize("name", ["writer", "reader"])
def test_http_images_stay_small(docker: Docker, images: dict[str, str], name: str):
    assert docker.inspect(images[name])["Size"] / 1e6 < HTTP_IMAGE_BUDGET_MB


def test_replicator_image_hands_spark_roles_to_spark(docker: Docker, images: dict[str, str]):
    """`driver` refuses to start without the address Spark on Kubernetes sets; any other command
    passes through (spark-submit from the pyspark package, on PATH)."""
    driver = docker.run("run", "--rm", images["replicator"], "driver", "--version", check=False)
    assert driver.returncode != 0
    assert "SPARK_DRIVER_BIND_ADDRESS" in driver.stderr
    submit = docker.run(
        "run", "--rm", "--read-only", images["replicator"], "spark-submit", "--version", check=False
    )
    assert submit.returncode == 0, submit.stderr
    assert "version 4.0.0" in submit.stdout + submit.stderr


def test_images_bake_in_no_ca_bundle_or_build_tools(docker: Docker, images: dict[str, str]):
    listing = docker.run(
        "run",
        "--rm",
        "--entrypoint",
        "sh",
        images["writer"],
        "-c",
        "ls /run/secrets 2>/dev/null; command -v gcc cc uv pip || true; ls /root/.cache 2>/dev/null || true",
    )
    assert listing.stdout.strip() == ""


def test_kafka_image_has_its_topic_step_compiled(docker: Docker, images: dict[str, str]):
    """The dev Kafka image's topic step is compiled into it (the image has no compiler)."""
    listing = docker.run("run", "--rm", "--entrypoint", "ls", images["kafka"], "/opt/kafka/classes")
    assert "CreateTopics.class" in listing.stdout


def test_cassandra_image_requires_its_roles_and_has_its_role_step_compiled(
    docker: Docker, images: dict[str, str]
):
    """The dev Cassandra requires authentication (as production does): without the admin role's
    credentials mounted it refuses to start, in one line, before the node starts at all; its role
    step (CreateRoles.java) is compiled into it (the image has no compiler)."""
    listing = docker.run(
        "run", "--rm", "--entrypoint", "ls", images["cassandra"], "/opt/cassandra/classes"
    )
    assert "CreateRoles.class" in listing.stdout
    started = docker.run("run", "--rm", "--read-only", images["cassandra"], check=False)
    assert started.returncode == 2, started.stdout + started.stderr
    assert started.stderr.strip().splitlines() == [
        "dev-cassandra: no admin credentials in /etc/cassandra-roles/admin/{username,password}: "
        "this node requires authentication; mount its roles' Secrets there"
    ]
