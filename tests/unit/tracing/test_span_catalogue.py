"""Every span name and `kjournal.` attribute key has one home: kjournal/spans/conventions.py.

The sources are read as Python (their syntax trees): a string that starts with `kjournal.` and
is not a module (an import path, a logger's name) is an attribute key written by hand, and the
first argument of a call that makes a span is a string written by hand. Either outside the
catalogue fails here, with where it stands.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from kjournal.spans import conventions

ROOT = Path(__file__).parents[3]
CATALOGUE = Path(conventions.__file__).resolve()
SOURCES = sorted(
    path
    for pattern in ("libs/*/src/**/*.py", "services/*/src/**/*.py", "infra/*/src/**/*.py")
    for path in ROOT.glob(pattern)
    if path.resolve() != CATALOGUE
)
KEY = re.compile(r"kjournal(\.[a-z_]+)+")
NOT_ATTRIBUTES = {
    "kjournal.grant": "the ASGI scope's key of a verified token (kjournal_service/auth)",
    "kjournal.yaml": "a file of the plain manifests (k8s/)",
    "kjournal.ops": "the entry-point group of the operators' commands (kjournal/cli/main.py)",
}
# The calls whose first argument is a span's name (cql_span's is the CQL operation: its name is
# the catalogue's cql_span(operation, table)).
SPAN_MAKERS = {"span", "start_span", "start_as_current_span"}


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _hand_written_keys(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and KEY.fullmatch(node.value)
        and node.value not in NOT_ATTRIBUTES
        and not _is_module(node.value)
    ]


def _hand_written_span_names(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        first = node.args[0]
        if name in SPAN_MAKERS and isinstance(first, ast.Constant | ast.JoinedStr):
            found.append((node.lineno, ast.unparse(first)))
    return found


def test_the_sources_are_found() -> None:
    assert len(SOURCES) > 200


@pytest.mark.parametrize(
    "hand_written",
    [_hand_written_keys, _hand_written_span_names],
    ids=["no kjournal attribute key", "no span name"],
)
def test_none_is_written_outside_the_catalogue(
    hand_written: Callable[[ast.AST], list[tuple[int, str]]],
) -> None:
    strays = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in SOURCES
        for line, text in hand_written(ast.parse(path.read_text()))
    ]
    assert strays == [], "use kjournal.spans.conventions:\n" + "\n".join(strays)


def test_the_checks_see_a_stray_key_and_a_stray_name() -> None:
    tree = ast.parse('span("tail", attributes={"kjournal.tail.hits": 1})\nimport kjournal.read\n')
    assert _hand_written_keys(tree) == [(1, "kjournal.tail.hits")]
    assert _hand_written_span_names(tree) == [(1, "'tail'")]
