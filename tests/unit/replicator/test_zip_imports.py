"""`zip_imports.install`: invalidate_caches re-reads a zip archive only when it changed."""

from __future__ import annotations

import importlib
import sys
import zipfile
import zipimport
from collections.abc import Iterator
from pathlib import Path

import pytest
from kjournal_replicator import zip_imports

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="the standard library is lazy itself from 3.12"
)


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "lib.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zipped_first.py", "VALUE = 1\n")
    sys.path.insert(0, str(path))
    original = zipimport.zipimporter.invalidate_caches
    try:
        yield path
    finally:
        zipimport.zipimporter.invalidate_caches = original  # type: ignore[method-assign]
        zip_imports._original = None
        sys.path.remove(str(path))
        sys.path_importer_cache.pop(str(path), None)
        for name in ("zipped_first", "zipped_second"):
            sys.modules.pop(name, None)


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    read_directory = zipimport._read_directory  # type: ignore[attr-defined]

    def counting(archive: str) -> object:
        reads.append(archive)
        return read_directory(archive)

    monkeypatch.setattr(zipimport, "_read_directory", counting)
    return reads


def test_an_unchanged_archive_is_read_once(archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert importlib.import_module("zipped_first").VALUE == 1
    zip_imports.install()
    zip_imports.install()
    reads = count_reads(monkeypatch)
    for _ in range(5):
        importlib.invalidate_caches()
    assert reads.count(str(archive)) == 1


def test_a_changed_archive_is_read_again_and_its_new_modules_import(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    importlib.import_module("zipped_first")
    zip_imports.install()
    importlib.invalidate_caches()
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("zipped_second.py", "VALUE = 2\n")
    reads = count_reads(monkeypatch)
    importlib.invalidate_caches()
    assert reads.count(str(archive)) == 1
    assert importlib.import_module("zipped_second").VALUE == 2
