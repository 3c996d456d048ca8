"""tags-scala.json is what scala-library prints: the tag orders wire/tag_order.py must match."""

from __future__ import annotations

import shutil

import pytest
from kjournal_dev.config import KAFKA_VERSION
from kjournal_dev.config import DevConfig

from tests.support.jshell import ROOT
from tests.support.jshell import jshell_output

FIXTURES = ROOT / "tests" / "fixtures" / "wire"


@pytest.mark.timeout(120)
def test_jshell_with_scala_library_reproduces_the_committed_orders():
    jshell = shutil.which("jshell")
    jars = sorted(
        (DevConfig.from_env().jars_dir / f"kafka-{KAFKA_VERSION}").glob("scala-library-*")
    )
    if jshell is None or not jars:
        pytest.skip("needs jshell and the scala-library jar Kafka brings (`scripts/dev up`)")
    printed = jshell_output(
        jshell, jars[:1], FIXTURES / "tags-scala.jsh", "-J-Dfile.encoding=UTF-8"
    )
    assert printed == (FIXTURES / "tags-scala.json").read_text()
