"""The documentation stands alone: it points only at files of this repository, and the tests it
names exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).exists()]


def test_nothing_points_outside_the_repository():
    offenders = []
    for path in _tracked("*.md", "*.py", "*.toml", "*.yaml", "*.sh"):
        if "tests/fixtures" in str(path):
            continue
        text = path.read_text(errors="replace")
        for needle in ("../shared", "anatomy §", "kafka-journal-anatomy"):
            if needle in text and path.name != "test_docs.py":
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offenders == []


def test_relative_links_in_the_docs_resolve():
    broken = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", path.read_text()):
            if "://" in target:
                continue
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)} → {target}")
    assert broken == []


def test_every_guard_docs_performance_names_exists():
    names = set(re.findall(r"`(test_\w+)`", (ROOT / "docs" / "performance.md").read_text()))
    assert len(names) > 8
    defined = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        defined |= set(re.findall(r"def (test_\w+)", path.read_text()))
    assert names - defined == set()
