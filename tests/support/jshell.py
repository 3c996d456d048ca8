"""What a committed jshell script prints: the tables Java or Scala computes, which the tests
compare with the committed copies kjournal reads (tests/fixtures/wire)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).parents[2]


def jshell_output(jshell: str, class_path: Sequence[Path], script: Path, *options: str) -> str:
    """Its standard output; run from the repository's root, failing if jshell does."""
    command = [jshell, *options, "--class-path", ":".join(map(str, class_path)), str(script)]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=110, check=True
    )
    return result.stdout
