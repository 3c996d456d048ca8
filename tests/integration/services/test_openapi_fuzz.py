"""Schemathesis against the real writer and reader: every check, zero failures.

The services' OpenAPI documents are the contract: data the schema accepts must be accepted
(positive_data_acceptance), data it refuses must be refused with a 4xx (negative_data_rejection),
no 5xx, answers as documented (status, content type, headers, body schema, `Allow` on 405). The
rules no JSON Schema can state live in fuzz/hooks.py; the run's settings in fuzz/schemathesis.toml.
`KJOURNAL_FUZZ_SEED` and `KJOURNAL_FUZZ_EXAMPLES` change the seed and the examples per operation.
With authentication on, the token goes through the bearer scheme of the document (the config's
`[auth.openapi]`), so that the checks can also send a request without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kjournal.client import Client
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal_dev.security.tokens import DevIssuer
from kjournal_service.auth.openapi import SCHEME

from tests.integration.services.support import RunningService
from tests.support.reports import add_session_report

# A run takes 20 s to 2 min on a quiet box (the secured reader's is the longest), and more than
# twice that on a busy one: the limit is the subprocess's own.
pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(960)]

FUZZ = Path(__file__).parent / "fuzz"
REPOSITORY = Path(__file__).parents[3]
SEED = os.environ.get("KJOURNAL_FUZZ_SEED", "20261125")
EXAMPLES = int(os.environ.get("KJOURNAL_FUZZ_EXAMPLES", "40"))
SECURED_EXAMPLES = max(1, EXAMPLES // 3)
"""With authentication on, the handlers are the same: fewer examples, every check (ignored_auth,
missing_required_header among them)."""
JOURNAL_ID = "fuzzed journal 1"  # schemathesis leaves a "/" in a path parameter as it is


def _config_file(tmp_path: Path, token: str | None) -> Path:
    """The run's settings; with a token, given through the bearer scheme the document declares,
    so that schemathesis can also send a request without it (its ignored_auth and
    missing_required_header checks)."""
    if token is None:
        return FUZZ / "schemathesis.toml"
    secured = tmp_path / "schemathesis-secured.toml"
    secured.write_text(
        (FUZZ / "schemathesis.toml").read_text()
        + f'\n[auth.openapi.{SCHEME}]\nbearer = "${{KJOURNAL_FUZZ_TOKEN}}"\n'
    )
    return secured


def _schemathesis(
    config: pytest.Config,
    tmp_path: Path,
    service: RunningService,
    topic: str,
    journal_id: str | None,
    token: str | None = None,
) -> str:
    env = {**os.environ, "KJOURNAL_FUZZ_TOPIC": topic}
    if token is not None:
        env["KJOURNAL_FUZZ_TOKEN"] = token
    if journal_id is not None:
        env["KJOURNAL_FUZZ_ID"] = journal_id
    command = [
        str(Path(sys.executable).parent / "st"),
        "--no-color",
        "--config-file",
        str(_config_file(tmp_path, token)),
        "run",
        f"{service.url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(EXAMPLES if token is None else SECURED_EXAMPLES),
        "--seed",
        SEED,
        "--request-timeout",
        "30",
    ]
    result = subprocess.run(
        command,
        cwd=REPOSITORY,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = result.stdout + result.stderr
    summary_line = output.rfind("\n", 0, output.rfind("=== SUMMARY")) + 1
    summary = output[summary_line:]
    title = f"schemathesis: {service.module}" + (" (authentication on)" if token else "")
    add_session_report(config, title, summary)
    assert result.returncode == 0, _failures(output)
    return output


def _failures(output: str) -> str:
    """The failures part of schemathesis' output, each line cut short (a reproducing curl line
    can carry a megabyte of body)."""
    start = output.find("=== FAILURES")
    lines = output[start if start >= 0 else 0 :].splitlines()
    return "\n".join(line if len(line) <= 400 else line[:400] + " ..." for line in lines)


def test_the_writer_meets_its_openapi_document(
    pytestconfig: pytest.Config, tmp_path: Path, writer: RunningService, topic: str
) -> None:
    _schemathesis(pytestconfig, tmp_path, writer, topic, None)


def test_the_reader_meets_its_openapi_document(
    pytestconfig: pytest.Config,
    tmp_path: Path,
    reader: RunningService,
    client: Client,
    topic: str,
) -> None:
    key = Key(topic, JOURNAL_ID)
    client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1})), Event(SeqNr(2))])
    client.append(key, [Event(SeqNr(3), tags=frozenset({"t"}), payload=TextPayload("three"))])
    _schemathesis(pytestconfig, tmp_path, reader, topic, JOURNAL_ID)


def test_the_secured_writer_meets_its_openapi_document(
    pytestconfig: pytest.Config,
    tmp_path: Path,
    secured_writer: RunningService,
    issuer: DevIssuer,
    topic: str,
) -> None:
    token = issuer.mint(["journal:append", "journal:delete"])
    _schemathesis(pytestconfig, tmp_path, secured_writer, topic, None, token)


def test_the_secured_reader_meets_its_openapi_document(
    pytestconfig: pytest.Config,
    tmp_path: Path,
    secured_reader: RunningService,
    issuer: DevIssuer,
    client: Client,
    topic: str,
) -> None:
    key = Key(topic, JOURNAL_ID)
    client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1})), Event(SeqNr(2))])
    # journal:append too: the reader serves an append's outcome to a writer's callers
    token = issuer.mint(["journal:read", "journal:admin", "journal:append"])
    _schemathesis(pytestconfig, tmp_path, secured_reader, topic, JOURNAL_ID, token)
