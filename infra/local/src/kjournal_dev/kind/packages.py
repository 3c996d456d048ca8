"""Debian packages the kind tool needs on the host, installed with apt-get when missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from kjournal_dev.errors import DevError
from kjournal_dev.kind.progress import Progress


def ensure(progress: Progress, needed: Mapping[str, Path], purpose: str) -> None:
    """Install the packages (keys) whose file (value) is missing; one clear line if impossible."""
    missing = sorted({package for package, path in needed.items() if not path.exists()})
    if not missing:
        return
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        why = "no apt-get" if apt is None else "not running as root"
        raise DevError(
            f"{purpose} needs {' '.join(missing)}, which is not installed and cannot be "
            f"installed here ({why}): install it, then run again"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    what = (
        f"installing {' '.join(missing)} with apt-get from this machine's apt sources (for "
        f"{purpose}; they stay installed after `kind down`)"
    )
    try:
        with progress.step(what):
            progress.run(what, [apt, "update", "-qq"], "apt", env=env, quiet=True)
            progress.run(
                what,
                [apt, "install", "-y", "-qq", "--no-install-recommends", *missing],
                "apt",
                env=env,
                quiet=True,
            )
    except DevError as err:
        raise DevError(f"{purpose}: {err}") from None
    still = sorted({p for p, path in needed.items() if not path.exists()})
    if still:
        raise DevError(
            f"{purpose}: apt-get installed {' '.join(missing)} but {still} is still missing"
        )
