"""tags-scala.json is what scala-library prints: the tag orders wire/tag_order.py must match."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from kjournal_dev.config import KAFKA_VERSION, DevConfig

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "wire"


@pytest.mark.timeout(120)
def test_jshell_with_scala_library_reproduces_the_committed_orders():
    jshell = shutil.which("jshell")
    jars = sorted(
        (DevConfig.from_env().jars_dir / f"kafka-{KAFKA_VERSION}").glob("scala-library-*")
    )
    if jshell is None or not jars:
        pytest.skip("needs jshell and the scala-library jar Kafka brings (`scripts/dev up`)")
    result = subprocess.run(
        [
            jshell,
            "-J-Dfile.encoding=UTF-8",
            "--class-path",
            str(jars[0]),
            str(FIXTURES / "tags-scala.jsh"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=True,
    )
    assert result.stdout == (FIXTURES / "tags-scala.json").read_text()
