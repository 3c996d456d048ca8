"""Span code stands on the OpenTelemetry API: the SDK and its exporters are imported by
kjournal.telemetry alone (the core's optional `tracing` extra). import-linter sees
`opentelemetry` as one external package, so this contract is checked here, over every import of
the shipped code, function-level ones included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ALLOWED = {Path("libs/kjournal/src/kjournal/telemetry.py")}
FORBIDDEN = ("opentelemetry.sdk", "opentelemetry.exporter")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_only_the_telemetry_module_imports_the_sdk() -> None:
    sources = [
        path for tree in ("libs", "services") for path in (ROOT / tree).glob("*/src/**/*.py")
    ]
    assert any(path.relative_to(ROOT) in ALLOWED for path in sources), "telemetry.py moved?"
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name for name in _imports(path) if name.startswith(FORBIDDEN)
        )
        for path in sources
        if path.relative_to(ROOT) not in ALLOWED
    }
    assert {path: names for path, names in offenders.items() if names} == {}
