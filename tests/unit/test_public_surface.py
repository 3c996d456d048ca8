"""The public surface: what `kjournal` exports is deliberate, and the error tree is documented.

Growing `__all__` is a reviewed act (this test pins it by its size and digest, as httpx's
test_exported_members pins the names); `import kjournal` loads no database driver; every error
class sits in `kjournal.errors` and in the tree its docstring draws.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys

import kjournal
import pytest
from kjournal import errors

# The public surface as reviewed: how many names `kjournal.__all__` holds and a digest of them.
# The names themselves stand in kjournal/__init__.py, whose diff shows what a change adds or
# removes; pin the new value (the failure prints it) only with that change reviewed.
REVIEWED_ALL = (57, "214dac55162c3a2e")


def test_all_is_sorted_and_pinned():
    names = kjournal.__all__
    assert names == sorted(names)
    pinned = (len(names), hashlib.sha256("\n".join(names).encode()).hexdigest()[:16])
    assert pinned == REVIEWED_ALL, (
        f"kjournal.__all__ is now {pinned}: a change of the public surface is a reviewed act"
    )


def test_every_exported_name_resolves():
    for name in kjournal.__all__:
        assert getattr(kjournal, name) is not None, name
    assert "Journals" in dir(kjournal)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="NoSuchThing"):
        kjournal.NoSuchThing  # noqa: B018


def test_importing_the_package_or_the_client_loads_no_driver():
    code = (
        "import sys, kjournal, kjournal.client, kjournal.cli.main\n"
        "loaded = [m for m in ('aiokafka', 'cassandra', 'pyspark', 'fastapi') if m in sys.modules]\n"
        "print(','.join(loaded))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def _documented_tree() -> dict[str, str | None]:
    """Class name → parent name, as drawn in the errors module's docstring."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)", line)
        if not match or not (line.startswith(("KJournalError", "│", "├", "└", " "))):
            continue
        depth = len(match.group(1)) // 4 + (1 if ("├" in line or "└" in line) else 0)
        name = match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def test_the_error_tree_in_the_docstring_is_the_class_tree():
    assert len(_documented_tree()) > 25
    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.KJournalError)
    }
    actual = {
        name: (None if cls is errors.KJournalError else cls.__mro__[1].__name__)
        for name, cls in classes.items()
    }
    assert _documented_tree() == actual


def _modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return names


def test_no_error_class_lives_outside_errors():
    packages = ("kjournal", "kjournal_service", "kjournal_writer", "kjournal_reader")
    names = [name for package in packages for name in _modules(package)]
    names += _modules("kjournal_replicator")
    assert len(names) > 60
    for name in names:
        if name == "kjournal.errors":
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                raise AssertionError(f"{name}.{value.__name__} should live in kjournal.errors")
