"""The per-machine build cache: where it is, and how an entry in it is written.

Builds that many checkouts can share (jars and the Maven repository, the OpenTelemetry
Collector, the kind toolchain and Go's caches, the Debian base, Docker's data root with its
images) live outside the checkout, so a fresh clone on a machine that built them once starts
warm. Each entry is a folder named by what it holds and its version (`jars/kafka-4.3.1`,
`otelcol/otelcol-kjournal-0.165.0`), built in a temporary sibling, marked complete last and then
renamed into place: a crash, or a second process building the same entry, never leaves a
half-written entry where a reader looks.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

__all__ = ["MARKER", "complete", "default_location", "entry"]

MARKER = ".complete"
"""Written last into a finished entry; an entry without it is treated as absent."""


def default_location(env: Mapping[str, str], home: Path | None = None) -> Path:
    """The user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`), then `kjournal`.

    A relative `XDG_CACHE_HOME` is ignored, as the XDG base directory specification says.
    """
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "kjournal"
    return (home or Path.home()) / ".cache" / "kjournal"


def complete(path: Path) -> bool:
    """Whether `path` is a finished entry."""
    return (path / MARKER).is_file()


@contextmanager
def entry(path: Path, marker: str = "") -> Iterator[Path]:
    """Build the entry `path`: yields a fresh temporary sibling to fill; when the block ends
    without an exception, writes the marker (with `marker` as its text) and renames the sibling
    to `path`. On an exception the sibling is removed and `path` is untouched.

    If another process finished `path` meanwhile, its entry is kept and this one dropped; an
    unfinished `path` (no marker: an older layout, or a crash before this helper existed) is
    replaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}.partial-", dir=path.parent))
    try:
        yield work
        (work / MARKER).write_text(marker)
        if path.exists() and not complete(path):
            shutil.rmtree(path, ignore_errors=True)
        try:
            os.rename(work, path)
        except OSError as exc:
            # rename(2) replaces only an empty folder: another process put a full one there.
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not complete(path):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
