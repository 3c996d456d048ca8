"""The import contracts (pyproject.toml) catch what they claim to.

Each contract gets one violation written into a copy of the source tree, and `lint-imports` run
on the copy must fail on that contract alone (not on another one by accident), naming the
injected import; the unmodified copy passes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
SOURCES = sorted(
    path.relative_to(ROOT)
    for pattern in ("libs/*/src", "services/*/src", "infra/*/src")
    for path in ROOT.glob(pattern)
)
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
_TOOL = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
LIVE: list[dict[str, Any]] = _TOOL["importlinter"]["contracts"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("tree")
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    for source in SOURCES:
        shutil.copytree(ROOT / source, copy / source, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _lint(tree: Path) -> tuple[int, str]:
    """lint-imports on the copy: its sources first on the path, ahead of the editable
    installs."""
    shutil.copy2(ROOT / "pyproject.toml", tree / "pyproject.toml")
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


def _contract(prefix: str) -> dict[str, Any]:
    """The contract whose name starts with `prefix`."""
    found = [c for c in LIVE if c["name"].startswith(prefix)]
    assert len(found) == 1, f"{len(found)} contracts are named {prefix!r}…"
    return found[0]


def test_the_unmodified_tree_passes(tree: Path):
    code, output = _lint(tree)
    assert code == 0, output
    assert f"Contracts: {len(LIVE)} kept, 0 broken" in output, output


# (contract, module, injected statement, the import lint-imports must name)
VIOLATIONS = [
    (
        "the core's layers",
        "kjournal.fold.batch",
        "from kjournal import replicate",
        "kjournal.fold.batch -> kjournal.replicate",
    ),
    (
        "the HTTP client and the CLI stand on",
        "kjournal.cli.render",
        "from kjournal.wire import record",
        "kjournal.cli.render -> kjournal.wire.record",
    ),
    (
        "the eventsourcing module reaches kjournal over HTTP only",
        "kjournal_eventsourcing.recorders",
        "from kjournal import memory",
        "kjournal_eventsourcing.recorders -> kjournal.memory",
    ),
    (
        "the model is plain Python",
        "kjournal.model.key",
        "import pydantic",
        "kjournal.model.key -> pydantic",
    ),
    (
        "services never import each other",
        "kjournal_writer.schemas",
        "from kjournal_reader import schemas",
        "kjournal_writer.schemas -> kjournal_reader.schemas",
    ),
    (
        "the core library never imports services",
        "kjournal.testing.eventual_store",
        "import kjournal_migrate",
        "kjournal.testing.eventual_store -> kjournal_migrate",
    ),
    (
        "the services and their shared code never import dev tooling",
        "kjournal_migrate.settings",
        "from kjournal_dev import config",
        "kjournal_migrate.settings -> kjournal_dev.config",
    ),
    (
        "the services' shared code never imports a service",
        "kjournal_service",
        "import kjournal_migrate",
        "kjournal_service -> kjournal_migrate",
    ),
    (
        "kjournal-dev: each tool in its own subpackage",
        "kjournal_dev.artifacts.maven",
        "from kjournal_dev import platform",
        "kjournal_dev.artifacts.maven -> kjournal_dev.platform",
    ),
    (
        "FastAPI and uvicorn stay out of the core",
        "kjournal.replication_status",
        "import starlette",
        "kjournal.replication_status -> starlette",
    ),
    (
        "the reader only reads",
        "kjournal_reader.streams",
        "from kjournal import replicate",
        "kjournal_reader.streams -> kjournal.replicate",
    ),
    (
        "the replicator never produces to Kafka",
        "kjournal_replicator.lag",
        "from kjournal.kafka import producer",
        "kjournal_replicator.lag -> kjournal.kafka.producer",
    ),
    (
        "only the replicator writes Cassandra",
        "kjournal_dev.platform.replay",
        "from kjournal.cassandra import writer",
        "kjournal_dev.platform.replay -> kjournal.cassandra.writer",
    ),
    (
        "only the schema step changes the schema",
        "kjournal_replicator.job",
        "from kjournal.cassandra.schema import migrate",
        "kjournal_replicator.job -> kjournal.cassandra.schema",
    ),
    (
        "aiokafka only in",
        "kjournal.cassandra.writer",
        "import aiokafka",
        "kjournal.cassandra.writer -> aiokafka",
    ),
    (
        "cassandra-driver only in",
        "kjournal.testing.records",
        "import cassandra.cluster",
        "kjournal.testing.records -> cassandra",
    ),
    ("pyspark only in", "kjournal_migrate", "import pyspark", "kjournal_migrate -> pyspark"),
    (
        "the OpenTelemetry SDK only in",
        "kjournal.spans",
        "from opentelemetry.sdk.trace import TracerProvider",
        "kjournal.spans -> opentelemetry.sdk.trace",
    ),
    (
        "the writer reaches Kafka and the reader only",
        "kjournal_writer.append_body",
        "from kjournal.cassandra import connection",
        "kjournal_writer.append_body -> kjournal.cassandra.connection",
    ),
    (
        "the reader never produces to Kafka",
        "kjournal_reader.streams",
        "from kjournal.kafka import producer",
        "kjournal_reader.streams -> kjournal.kafka.producer",
    ),
]


def test_every_contract_has_its_violation():
    named = {_contract(prefix)["name"] for prefix, *_ in VIOLATIONS}
    assert named == {contract["name"] for contract in LIVE}
    assert len(VIOLATIONS) == len(named)


@pytest.mark.parametrize(
    ("contract", "module", "statement", "names"),
    [pytest.param(*violation, id=violation[0]) for violation in VIOLATIONS],
)
def test_each_violation_breaks_its_own_contract(
    tree: Path, contract: str, module: str, statement: str, names: str
):
    found = _contract(contract)
    path = _module_file(tree, module)
    original = path.read_text()
    path.write_text(original + f"\n{statement}  # injected by the test\n")
    try:
        code, output = _lint(tree)
    finally:
        path.write_text(original)
    assert code != 0, output
    assert f"{found['name']} BROKEN" in output, output
    assert re.search(r"Contracts: \d+ kept, 1 broken", output), output
    assert re.search(rf"- {re.escape(names)} \(l\.\d+\)", output), output
