"""The import contracts (pyproject.toml) catch what they claim to.

Each kind of violation is written into a copy of the source tree, and `lint-imports` run on the
copy must fail on the contract that forbids it (not on another one by accident); the unmodified
copy passes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SOURCES = sorted(
    path.relative_to(ROOT)
    for pattern in ("libs/*/src", "services/*/src", "infra/*/src")
    for path in ROOT.glob(pattern)
)
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("tree")
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    for source in SOURCES:
        shutil.copytree(ROOT / source, copy / source, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _lint(tree: Path) -> tuple[int, str]:
    """lint-imports on the copy: its sources first on the path, ahead of the editable installs."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(tree / source) for source in SOURCES)}
    result = subprocess.run(
        [str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def _module_file(tree: Path, module: str) -> Path:
    parts = module.split(".")
    for source in SOURCES:
        base = tree / source / Path(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    raise AssertionError(f"{module} is not in the tree")


def test_the_unmodified_tree_passes(tree: Path):
    code, output = _lint(tree)
    assert code == 0, output
    assert re.search(r"Contracts: \d+ kept, 0 broken", output), output


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        pytest.param(
            "kjournal.api.keys",
            "from kjournal import journal",
            "the core's layers",
            id="api-imports-journal",
        ),
        pytest.param(
            "kjournal.read", "import aiokafka", "aiokafka only in", id="aiokafka-in-the-core"
        ),
        pytest.param(
            "kjournal_reader.app",
            "import cassandra.cluster",
            "cassandra-driver only in",
            id="cassandra-driver-in-the-reader",
        ),
        pytest.param(
            "kjournal_migrate", "import pyspark", "pyspark only in", id="pyspark-in-migrate"
        ),
        pytest.param(
            "kjournal.journal",
            "from opentelemetry.sdk.trace import TracerProvider",
            "the OpenTelemetry SDK only in",
            id="sdk-in-the-core",
        ),
    ],
)
def test_each_violation_breaks_its_own_contract(
    tree: Path, module: str, statement: str, contract: str
):
    path = _module_file(tree, module)
    original = path.read_text()
    path.write_text(original + f"\n{statement}  # injected by the test\n")
    try:
        code, output = _lint(tree)
    finally:
        path.write_text(original)
    assert code != 0, output
    assert f"{_contract_named(contract)} BROKEN" in output, output


def _contract_named(prefix: str) -> str:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (name,) = [c["name"] for c in contracts["contracts"] if c["name"].startswith(prefix)]
    return str(name)
