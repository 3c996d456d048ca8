"""`pip install kjournal` is the HTTP client and the CLI alone: no Kafka or Cassandra driver.

The core distribution is built into a wheel and installed into a fresh virtual environment (the
dependencies come from the machine's uv cache or PyPI); the installed `kjournal` CLI then appends
and reads through the real services, and importing the client loads no driver.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.services.support import RunningService

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[3]


def _uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("client-only")
    uv = _uv()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    subprocess.run(
        [*uv, "build", "--wheel", "--quiet", "--out-dir", str(work / "dist"), "libs/kjournal"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    (wheel,) = (work / "dist").glob("kjournal-*.whl")
    venv = work / "venv"
    subprocess.run(
        [*uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=env
    )
    subprocess.run(
        [*uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel)],
        check=True,
        env=env,
    )
    return venv


def test_the_client_alone_installs_without_drivers_and_reads(
    client_venv: Path, writer: RunningService, reader: RunningService, topic: str
) -> None:
    python = str(client_venv / "bin" / "python")
    listed = subprocess.run(
        [*_uv(), "pip", "list", "--python", python, "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    for driver in ("aiokafka", "cassandra-driver", "pyspark", "fastapi"):
        assert f"{driver}==" not in listed, listed
    subprocess.run(
        [python, "-c", "import kjournal.client, sys; assert 'aiokafka' not in sys.modules"],
        check=True,
    )

    cli = str(client_venv / "bin" / "kjournal")
    urls = ["--writer", writer.url, "--reader", reader.url]
    appended = subprocess.run(
        [cli, *urls, "append", topic, "client-only", '{"n": 1}', '{"n": 2}'],
        capture_output=True,
        text=True,
    )
    assert appended.returncode == 0, appended.stderr
    read = subprocess.run(
        [cli, *urls, "read", topic, "client-only", "--format", "ndjson", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert read.returncode == 0, read.stderr
    assert [line.split('"seqNr":')[1].split(",")[0] for line in read.stdout.splitlines()] == [
        "1",
        "2",
    ]
