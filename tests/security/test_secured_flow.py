"""The whole flow with everything secured: an authenticated HTTP append (writer, SCRAM principal
with WRITE only) → Kafka → the Spark replicator (READ only, Cassandra role with MODIFY on its
tables) → Cassandra → an authenticated HTTP read (reader, READ only, SELECT only). No credential
shows up in any log, the state file, or `status`; a service given a wrong password stops at
start-up with one line naming the system and the principal."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest
from kjournal.client import Client
from kjournal.errors import NotAuthenticated
from kjournal.model import Event
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal_dev.cli import main as dev_main
from kjournal_dev.platform.jobs import run_job

from tests.security.conftest import TOPIC
from tests.security.conftest import SecuredPlatform
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.security]

REPLICATION_TIMEOUT_S = 300.0


def test_append_replicate_read(secured: SecuredPlatform):
    token = secured.issuer.mint(["journal:append", "journal:read"], topics=[TOPIC])
    key = Key(TOPIC, "secured-flow-1")
    events = [Event(SeqNr(1), payload=JsonPayload({"amount": 5})), Event(SeqNr(2))]
    with Client(secured.url("writer"), secured.url("reader"), token=token, timeout=30) as client:
        client.append(key, events)
        client.append(key, [Event(SeqNr(3), payload=TextPayload("shipped"))])
        deadline = time.monotonic() + REPLICATION_TIMEOUT_S
        while True:
            status = client.status(key)
            assert status is not None
            if status.unreplicated_actions == 0 and status.pointer2 is not None:
                break
            assert time.monotonic() < deadline, f"not replicated in time: {status}"
            time.sleep(1)
        assert status.pointer2 >= status.end_offset - 1  # all of it is in Cassandra now
        records = list(client.read(key))
    assert [record.event.seq_nr for record in records] == [1, 2, 3]
    assert records[0].event.payload == JsonPayload({"amount": 5})
    assert records[2].event.payload == TextPayload("shipped")
    anonymous = Client(secured.url("writer"), secured.url("reader"), timeout=30)
    with anonymous, pytest.raises(NotAuthenticated):
        anonymous.status(key)


def test_the_expiry_job_purges_as_its_own_principal(
    secured: SecuredPlatform, capfd: pytest.CaptureFixture[str]
):
    """`kjournal-dev expire` logs in as kjournal-expiry / kjournal_expiry: it finds the expired
    head (SELECT), reads the journal's tail and produces its purge (READ, WRITE), and the
    replicator applies the purge like any other."""
    token = secured.issuer.mint(["journal:append", "journal:read"], topics=[TOPIC])
    key = Key(TOPIC, "secured-expiry-1")
    second = RecordMetadata(payload=PayloadMetadata(expire_after=ExpireAfter.of(1, "second")))
    with Client(secured.url("writer"), secured.url("reader"), token=token, timeout=30) as client:
        client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1}))], second)
        deadline = time.monotonic() + REPLICATION_TIMEOUT_S
        while (status := client.status(key)) is None or status.unreplicated_actions:
            assert time.monotonic() < deadline, f"not replicated in time: {status}"
            time.sleep(0.5)
        replicated = datetime.now(UTC)
        while datetime.now(UTC).date() < (replicated + timedelta(seconds=1)).date():
            time.sleep(0.1)  # past midnight UTC, its expire_on is tomorrow: wait for the date
        capfd.readouterr()
        # What `kjournal-dev expire` runs, with the secured platform's settings and credentials.
        assert run_job(secured.config, "expiry", [TOPIC]) == 0
        out = capfd.readouterr().out
        assert f"expiry of {TOPIC} as of" in out
        assert " 1 purged" in out, out
        while client.pointer(key) is not None:
            assert time.monotonic() < deadline, "the purge was not applied in time"
            time.sleep(0.5)


def test_no_credential_is_written_anywhere_else(
    secured: SecuredPlatform, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("KJOURNAL_DEV_STATE_DIR", str(secured.config.state_dir))
    assert dev_main(["status"]) == 0
    status_output = capsys.readouterr().out
    files = [
        path
        for root in (secured.endpoints.data_dir, secured.config.state_dir)
        for path in Path(root).rglob("*")
        if path.is_file()
    ]
    holding = {
        path
        for path in files
        if any(secret.encode() in _bytes(path) for secret in secured.credentials.secrets())
    }
    # Only the credentials file and the broker's own configuration, both the owner's alone: no
    # log, no state file, nothing `status` prints.
    assert {path.name for path in holding} == {"credentials.json", "server.properties"}, holding
    for path in holding:
        assert path.stat().st_mode & 0o077 == 0, path
    assert not any(secret in status_output for secret in secured.credentials.secrets())


def _bytes(path: Path) -> bytes:
    """The file's content; nothing if it went away meanwhile (Spark's temporary files do)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


@pytest.mark.parametrize(
    ("module", "system"),
    [("kjournal_writer", "Kafka"), ("kjournal_reader", "Cassandra")],
)
def test_a_wrong_password_stops_a_service_with_one_line(
    secured: SecuredPlatform, pytestconfig: pytest.Config, module: str, system: str
):
    config = secured.config
    env = {
        "PATH": "/usr/bin:/bin",
        "KJOURNAL_HTTP__PORT": "1",  # never reached: it stops before listening
        "KJOURNAL_READER__URL": "http://127.0.0.1:1",  # never asked: it stops before
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": config.kafka_bootstrap,
        "KJOURNAL_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KJOURNAL_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "KJOURNAL_KAFKA__SASL_USERNAME": "kjournal-reader",
        "KJOURNAL_KAFKA__SASL_PASSWORD": secured.credentials.kafka["kjournal-reader"],
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": config.host,
        "KJOURNAL_CASSANDRA__PORT": str(config.cassandra_port),
        "KJOURNAL_CASSANDRA__KEYSPACE": config.keyspace,
        "KJOURNAL_CASSANDRA__USERNAME": "kjournal_reader",
        "KJOURNAL_CASSANDRA__PASSWORD": secured.credentials.cassandra["kjournal_reader"],
    }
    if system == "Kafka":
        env["KJOURNAL_KAFKA__SASL_USERNAME"] = "kjournal-writer"
        env["KJOURNAL_KAFKA__SASL_PASSWORD"] = "not-the-password"
    else:
        env["KJOURNAL_CASSANDRA__PASSWORD"] = "not-the-password"
    result = subprocess.run(
        [sys.executable, "-m", module], env=env, capture_output=True, text=True, timeout=120
    )
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert result.returncode == 3, lines
    assert len(lines) == 1, lines
    principal = "'kjournal-writer'" if system == "Kafka" else "'kjournal_reader'"
    assert f"cannot start: {system} at " in lines[0]
    assert principal in lines[0]
    assert "not-the-password" not in lines[0]
    add_session_report(pytestconfig, f"wrong password: {module}", lines[0])


def test_a_wrong_password_stops_the_replicator_with_one_line(
    secured: SecuredPlatform, pytestconfig: pytest.Config
):
    config = secured.config
    env = {
        "PATH": "/usr/bin:/bin",
        "KJOURNAL_HTTP__ENABLED": "false",
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": config.kafka_bootstrap,
        "KJOURNAL_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KJOURNAL_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "KJOURNAL_KAFKA__SASL_USERNAME": "kjournal-replicator",
        "KJOURNAL_KAFKA__SASL_PASSWORD": "not-the-password",
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": config.host,
        "KJOURNAL_CASSANDRA__PORT": str(config.cassandra_port),
        "KJOURNAL_CASSANDRA__KEYSPACE": config.keyspace,
    }
    result = subprocess.run(
        [sys.executable, "-m", "kjournal_replicator"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    errors = [line for line in lines if line["level"] == "ERROR"]
    assert result.returncode == 2, (lines, result.stderr)
    assert len(errors) == 1, lines
    (error,) = errors
    assert "exception" not in error  # no traceback
    assert error["message"].startswith(
        f"the replicator cannot start: Kafka at {config.kafka_bootstrap} refused the "
        "credentials of SASL user 'kjournal-replicator' (SCRAM-SHA-512)"
    )
    add_session_report(pytestconfig, "wrong password: kjournal_replicator", error["message"])
