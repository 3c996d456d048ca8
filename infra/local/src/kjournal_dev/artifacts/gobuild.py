"""Go builds into the build cache: which `go`, the environment it builds in, and its caches.

kjournal-dev builds the kind toolchain and the OpenTelemetry Collector from Go modules. Go keeps
a module cache and a build cache under `<build cache>/go` (kjournal_dev/build_cache.py). Both
matter only while building and grow to many GB (docs/images.md has the figures), more than the
binaries they make, so they are dropped once those binaries exist, and the build cache also
between two builds when the disk runs short.
A later version bump downloads and compiles again.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kjournal_dev.errors import DevError

_GO_FALLBACK = Path("/usr/local/go/bin/go")


def find_go(needed_for: str) -> str:
    """The `go` command, or a one-line error saying what it was needed for."""
    found = shutil.which("go") or (str(_GO_FALLBACK) if _GO_FALLBACK.is_file() else None)
    if found is None:
        raise DevError(
            f"Go is needed to build {needed_for} from Go modules: install Go 1.24 or newer "
            "(e.g. into /usr/local/go) or put `go` on PATH"
        )
    return found


def module_proxy(go: str) -> str:
    """Where `go` downloads modules from (GOPROXY), for the line that says so."""
    try:
        out = subprocess.run(
            [go, "env", "GOPROXY"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "the Go module proxy"
    return out.stdout.strip() or "the Go module proxy"


NO_DWARF = "-gcflags=all=-dwarf=false"


def go_root(cache_dir: Path) -> Path:
    return cache_dir / "go"


def go_env(cache_dir: Path, bin_dir: Path, go: str) -> dict[str, str]:
    """Go's caches under the cache folder, binaries into `bin_dir`, static, no toolchain fetch."""
    root = go_root(cache_dir)
    return {
        **os.environ,
        # Some builders (the collector's) run `go` themselves.
        "PATH": str(Path(go).parent) + os.pathsep + os.environ.get("PATH", ""),
        "GOPATH": str(root / "path"),
        "GOMODCACHE": str(root / "mod"),
        "GOCACHE": str(root / "build"),
        # A module cache that `rm -rf` can delete (Go makes it read-only by default); no DWARF
        # from the compiler, which every build here drops at link time anyway (`-ldflags=-s -w`):
        # 13 % less CPU for a cold build of kube-scheduler here (281 s against 323 s).
        "GOFLAGS": f"-modcacherw {NO_DWARF}",
        # Build with the Go that is installed; never fetch another toolchain.
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "GOBIN": str(bin_dir),
    }


@contextmanager
def exclusive(cache_dir: Path) -> Iterator[None]:
    """One Go build at a time per cache: a build must not lose its caches to another's cleanup."""
    root = go_root(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def drop_build_cache(cache_dir: Path) -> None:
    shutil.rmtree(go_root(cache_dir) / "build", ignore_errors=True)


_kept: set[Path] = set()


def drop_caches(cache_dir: Path) -> None:
    """Remove Go's build and module caches (the built binaries stay where they are), unless
    `caches_kept` holds them for builds still to come in this process."""
    root = go_root(cache_dir)
    if root in _kept:
        return
    for name in ("build", "mod", "path"):  # not the lock, which a waiting build may hold open
        shutil.rmtree(root / name, ignore_errors=True)


@contextmanager
def caches_kept(cache_dir: Path) -> Iterator[None]:
    """Go's caches stay between the builds of this block (they share the standard library, and
    the packages and modules of the same versions), and are dropped once, at its end. Between
    two builds the lock is free, so another process may build meanwhile (and drop them: the next
    build is then only slower)."""
    root = go_root(cache_dir)
    _kept.add(root)
    try:
        yield
    finally:
        _kept.discard(root)
        with exclusive(cache_dir):
            drop_caches(cache_dir)


def free_gb(path: Path) -> float:
    """Free space on the file system that holds `path` (or would hold it, once created)."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    return shutil.disk_usage(probe).free / 1e9


def require_disk(path: Path, need_gb: float, what: str) -> None:
    free = free_gb(path)
    if free < need_gb:
        raise DevError(
            f"not enough disk for {what}: {free:.1f} GB free under {path}, about "
            f"{need_gb:.0f} GB needed (free some, or point KJOURNAL_DEV_BUILD_CACHE elsewhere)"
        )
