"""`java_lower_case` agrees with the machine's real Java 17 on every code point.

One JVM run of tests/fixtures/java_unicode/JavaLowerCase.java prints Java's lower case of every
code point alone and in five sigma contexts, of hand-picked ids and of 20 000 pseudo-random ids,
and the tables it reads off the JVM; our function must agree on all of it, and the committed
tables and test data must be what this Java prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from typing import get_args

import pytest
from kjournal.cassandra import java_lower
from kjournal.cassandra.java_lower import JavaVersion

from tests.support.java_lower_expected import fuzz_differences
from tests.support.java_lower_expected import id_differences
from tests.support.java_lower_expected import single_differences
from tests.support.java_lower_expected import template_differences

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "java_unicode"
TABLES = Path(java_lower.__file__).parent / "java_unicode"
TABLE_KEYS = ("lower", "lower_multi", "cased", "word")
OPENS = [
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.text=ALL-UNNAMED",
]
# Other JVMs to check against their own tables: `java` executables separated by os.pathsep.
OTHER_JAVAS = [
    path for path in os.environ.get("KJOURNAL_TEST_OTHER_JAVAS", "").split(os.pathsep) if path
]


def _printed(command: list[str]) -> dict[str, Any]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=170, check=True)
    printed: dict[str, Any] = json.loads(result.stdout)
    return printed


@pytest.fixture(scope="module")
def java17() -> dict[str, Any]:
    java = shutil.which("java")
    if java is None:
        pytest.skip("needs the machine's Java 17 (java on PATH)")
    printed = _printed([java, *OPENS, str(FIXTURES / "JavaLowerCase.java"), "compare"])
    if not printed["java"].startswith("17."):
        pytest.skip(f"java on PATH is {printed['java']}, not Java 17")
    return printed


def _differences(printed: dict[str, Any], java: JavaVersion) -> list[str]:
    differences = single_differences(printed, java)
    for template, final_edges in printed["templates"].items():
        differences += template_differences(template, final_edges, java, every_bmp=True)
    differences += id_differences(printed, java)
    differences += fuzz_differences(printed["fuzz"], java)
    return differences


def _data_differences(printed: dict[str, Any], java: JavaVersion) -> list[str]:
    """Where the committed tables and test data are not what `printed` holds."""
    tables = json.loads((TABLES / f"java{java}.json").read_text("ascii"))
    expected = json.loads((FIXTURES / f"java{java}-expected.json").read_text("ascii"))
    printed_fuzz = {key: value for key, value in printed["fuzz"].items() if key != "lower"}
    differences = [key for key in TABLE_KEYS if printed[key] != tables[key]]
    differences += [key for key in ("single", "templates", "ids") if printed[key] != expected[key]]
    if printed_fuzz != expected["fuzz"]:
        differences.append("fuzz")
    return differences


@pytest.mark.timeout(240)
def test_every_code_point_and_sigma_context_lower_cases_as_in_java_17(java17: dict[str, Any]):
    assert _differences(java17, 17) == []


@pytest.mark.timeout(240)
def test_the_committed_tables_and_test_data_are_what_java_17_prints(java17: dict[str, Any]):
    # Java 17 updates keep Unicode 13, so the data must not depend on the update release.
    assert _data_differences(java17, 17) == []


@pytest.mark.timeout(400)
@pytest.mark.parametrize(
    "java",
    OTHER_JAVAS
    or [pytest.param("", marks=pytest.mark.skip(reason="KJOURNAL_TEST_OTHER_JAVAS is not set"))],
)
def test_other_javas_agree_with_their_own_tables(java: str, tmp_path: Path):
    """Set KJOURNAL_TEST_OTHER_JAVAS to e.g. a Java 21 and a Java 25 `java` (README there)."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("needs javac on PATH to compile the generator for another JVM")
    source = FIXTURES / "JavaLowerCase.java"
    subprocess.run([javac, "--release", "17", "-d", str(tmp_path), str(source)], check=True)
    printed = _printed([java, *OPENS, "-cp", str(tmp_path), "JavaLowerCase", "compare"])
    versions = {str(version): version for version in get_args(JavaVersion)}
    version: JavaVersion | None = versions.get(printed["java"].split(".")[0])
    assert version is not None, f"no tables for Java {printed['java']}"

    assert _differences(printed, version) == []
    assert _data_differences(printed, version) == []
