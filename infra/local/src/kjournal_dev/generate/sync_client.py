"""The blocking HTTP client, generated from the asyncio one (as httpcore's unasync does).

`kjournal/client/_async.py` is the one source of both clients; `_sync.py` is that module with
every asynchronous word replaced by its blocking twin (`SUBSTITUTIONS`, whole words only), then
formatted by ruff. `kjournal-dev sync-client` (run by the test suite) fails when the file is not
what its source generates; `--write` regenerates it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from kjournal_dev.config import find_repo_root

__all__ = ["HEADER", "SUBSTITUTIONS", "check", "render", "source_path", "sync_path", "write"]

HEADER = (
    "# Generated from _async.py by `scripts/dev sync-client --write`: edit that file, not this one."
)

# In order: a pattern, as a regular expression of whole words, and what replaces it.
SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    (r"import asyncio\n", ""),
    (r"asyncio\.sleep", "time.sleep"),
    (r"AsyncGenerator\[([^\[\]]+), None\]", r"Generator[\1, None, None]"),
    (r"AsyncGenerator", "Generator"),
    (r"AsyncBaseTransport", "BaseTransport"),
    (r"AsyncClient", "Client"),
    (r"Asyncio client", "Blocking client"),
    (r"asyncio HTTP client", "blocking HTTP client"),
    (r"(c|C)lose it \(contextlib\.aclosing\)", r"\1lose the iterator"),
    (r"__aenter__", "__enter__"),
    (r"__aexit__", "__exit__"),
    (r"aclose", "close"),
    (r"aread", "read"),
    (r"aiter_lines", "iter_lines"),
    (r"async def", "def"),
    (r"async with", "with"),
    (r"async for", "for"),
    (r"await ", ""),
)
_COMPILED = [(re.compile(rf"\b{pattern}"), replacement) for pattern, replacement in SUBSTITUTIONS]


def source_path() -> Path:
    return find_repo_root() / "libs" / "kjournal" / "src" / "kjournal" / "client" / "_async.py"


def sync_path() -> Path:
    return source_path().with_name("_sync.py")


def render(source: str) -> str:
    """The blocking module `source` (an asyncio module's text) generates."""
    text = source
    for pattern, replacement in _COMPILED:
        text = pattern.sub(replacement, text)
    return _formatted(f"{HEADER}\n{text}")


def check() -> str | None:
    """None if `_sync.py` is what `_async.py` generates, else what to do about it."""
    target = sync_path()
    if target.read_text() == render(source_path().read_text()):
        return None
    return f"{target} is not what {source_path().name} generates: run `scripts/dev sync-client --write`"


def write() -> Path:
    target = sync_path()
    target.write_text(render(source_path().read_text()))
    return target


def _formatted(text: str) -> str:
    """`text` as `ruff format` leaves it, with the repository's settings."""
    ruff = Path(sys.executable).with_name("ruff")
    command = str(ruff) if ruff.is_file() else shutil.which("ruff")
    if command is None:
        raise RuntimeError("ruff (a development dependency) is not installed")
    result = subprocess.run(
        [command, "format", "--stdin-filename", str(sync_path()), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=find_repo_root(),
    )
    if result.returncode != 0:
        raise RuntimeError(f"ruff format failed on the generated client: {result.stderr.strip()}")
    return result.stdout
