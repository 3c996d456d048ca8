"""`kjournal` against the real services: what a person types, what they see."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from kjournal.cli import main

from tests.integration.services.support import RunningService

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


def _run(
    capsys: pytest.CaptureFixture[str], writer: RunningService, reader: RunningService, *args: str
) -> tuple[int, str, str]:
    code = main(["--writer", writer.url, "--reader", reader.url, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_cli_commands(
    writer: RunningService,
    reader: RunningService,
    topic: str,
    capsys: pytest.CaptureFixture[str],
):
    def kj(*args: str) -> tuple[int, str, str]:
        return _run(capsys, writer, reader, *args)

    assert kj("pointer", topic, "cli-1")[0] == 1
    code, out, _ = kj("append", topic, "cli-1", '{"amount": 5}', '{"amount": 7}', "--tag", "x")
    assert code == 0
    assert out.startswith("appended seqNr 1..2 at partition ")
    code, out, _ = kj(
        "append", topic, "cli-1", "hello", "--type", "text", "--expire-after", "7 days"
    )
    assert (code, out.split()[:3]) == (0, ["appended", "seqNr", "3"])  # the pointer + 1

    code, out, err = kj("read", topic, "cli-1")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2", "3"]
    assert lines[0].endswith('{"amount":5}')
    assert lines[2].endswith('"hello"')
    assert err.strip().endswith("3 events")

    code, out, _ = kj("read", topic, "cli-1", "--from", "2", "--format", "ndjson")
    assert [json.loads(line)["seqNr"] for line in out.splitlines()] == [2, 3]

    assert kj("pointer", topic, "cli-1")[:2] == (0, "3\n")
    code, out, _ = kj("status", topic, "cli-1", "--format", "json")
    assert json.loads(out)["seqNr"] == "3"
    code, out, _ = kj("status", topic, "cli-1")
    assert "unreplicated actions" in out

    assert kj("delete", topic, "cli-1", "--to", "2")[0] == 0
    assert kj("read", topic, "cli-1")[1].split()[0] == "3"
    code, out, _ = kj("mark", topic, "cli-1", "--id", "m-1")
    assert out.startswith("mark m-1 at partition")
    assert kj("purge", topic, "cli-1", "--yes")[0] == 0
    assert kj("pointer", topic, "cli-1")[0] == 1

    code, out, _ = kj("replication", topic)
    assert code == 0
    assert out.splitlines()[-1].split()[0] == "total"

    code, _, err = kj("append", topic, "cli-1", "{not json")
    assert code == 1
    assert "InvalidPayload" in err
    code, _, err = kj("read", "journal_no_such_topic", "x")
    assert (code, err.strip()) == (
        1,
        "kjournal: error: UnknownTopic: topic 'journal_no_such_topic' does not exist",
    )


def test_tail_follows_new_events(writer: RunningService, reader: RunningService, topic: str):
    env = {**os.environ, "KJOURNAL_WRITER_URL": writer.url, "KJOURNAL_READER_URL": reader.url}
    base = [sys.executable, "-m", "kjournal.cli"]
    subprocess.run([*base, "append", topic, "t", "1"], env=env, check=True, capture_output=True)
    with subprocess.Popen(
        [*base, "tail", topic, "t", "--interval", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as tail:
        try:
            assert tail.stdout is not None
            assert tail.stdout.readline().split()[0] == "1"
            subprocess.run(
                [*base, "append", topic, "t", "2", "3"], env=env, check=True, capture_output=True
            )
            seen = [tail.stdout.readline().split()[0] for _ in range(2)]
            assert seen == ["2", "3"]
        finally:
            tail.send_signal(signal.SIGINT)
            try:
                # It stops between requests (kjournal/cli/interrupt.py); generous for a loaded box.
                code = tail.wait(60)
            finally:
                tail.kill()  # never leave it running for the next test (a ResourceWarning)
            assert code == 0
