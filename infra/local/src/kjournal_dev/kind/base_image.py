"""The Debian base every image builds FROM (`debian:bookworm-slim`): pulled where a registry
answers, otherwise made once with debootstrap (minbase, trimmed like the official slim image),
kept as a tarball in the cache and imported under the same name."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from kjournal_dev.kind import packages
from kjournal_dev.kind import versions
from kjournal_dev.kind.engine import Engine
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.settings import KindSettings

DEBOOTSTRAP = Path("/usr/sbin/debootstrap")

# What Docker's official slim images leave out of every later `apt-get install` too.
_DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
"""
_TRIMMED = (
    "usr/share/doc/*",
    "usr/share/man/*",
    "usr/share/info/*",
    "usr/share/locale/*",
    "var/lib/apt/lists/*",
    "var/cache/apt/*.bin",
    "var/cache/apt/archives/*.deb",
    "var/log/*.log",
    "var/log/apt/*",
    "tmp/*",
)
_APT_CLEAN = """\
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::GzipIndexes "true";
Acquire::Languages "none";
"""


def image_exists(engine: Engine, progress: Progress, name: str) -> bool:
    probe = progress.capture(
        engine.docker("image", "inspect", "--format", "{{.Id}}", name),
        env=engine.env(),
        check=False,
    )
    return probe.returncode == 0


def ensure(engine: Engine, progress: Progress, settings: KindSettings, offline: bool) -> None:
    name = versions.BASE_IMAGE
    if image_exists(engine, progress, name):
        return
    if not offline:
        progress.run(f"pulling {name}", engine.docker("pull", name), "base-image", env=engine.env())
        return
    tarball = ensure_rootfs(progress, settings)
    progress.run(
        f"importing the debootstrapped Debian as {name}",
        engine.docker(
            "import",
            "--change",
            'CMD ["bash"]',
            "--change",
            "LABEL dev.kjournal.base=debootstrap-minbase",
            str(tarball),
            name,
        ),
        "base-image",
        env=engine.env(),
    )


def ensure_rootfs(progress: Progress, settings: KindSettings) -> Path:
    """The debootstrapped Debian as a tarball in the build cache (no Docker engine needed), made
    first if missing."""
    tarball = settings.rootfs_tar
    if tarball.is_file():
        return tarball
    packages.ensure(progress, {"debootstrap": DEBOOTSTRAP}, "building the Debian base image")
    # Unique partial names: two checkouts may build the same machine-wide tarball at once.
    settings.kind_cache.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="rootfs.partial-", dir=settings.kind_cache))
    root.chmod(0o755)  # it becomes the image's `/` (mkdtemp makes it 0700)
    partial = root.with_name(root.name + ".tar")
    started = time.monotonic()
    try:
        progress.run(
            f"debootstrap {versions.DEBIAN_SUITE} (minbase) from {settings.debian_mirror}",
            [
                str(DEBOOTSTRAP),
                "--variant=minbase",
                versions.DEBIAN_SUITE,
                str(root),
                settings.debian_mirror,
            ],
            "debootstrap",
        )
        _slim(root, settings.debian_mirror)
        progress.run(
            "packing the Debian root file system",
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."],
            "debootstrap",
        )
        partial.replace(tarball)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        partial.unlink(missing_ok=True)
    progress.report(f"Debian base ready in {elapsed(time.monotonic() - started)}: {tarball}")
    return tarball


def _slim(root: Path, mirror: str) -> None:
    """Trim the tree like the official slim image and point apt at the suite and its updates."""
    for pattern in _TRIMMED:
        for path in root.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    (root / "etc/dpkg/dpkg.cfg.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/dpkg/dpkg.cfg.d/docker").write_text(_DPKG_EXCLUDES)
    (root / "etc/apt/apt.conf.d/docker-clean").write_text(_APT_CLEAN)
    # The build host's resolver and name do not belong in an image (docker supplies its own).
    for name in ("etc/resolv.conf", "etc/hostname"):
        (root / name).unlink(missing_ok=True)
    security = mirror.rstrip("/") + "-security"
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d").mkdir(parents=True, exist_ok=True)
    suite = versions.DEBIAN_SUITE
    (root / "etc/apt/sources.list.d/debian.sources").write_text(
        f"Types: deb\nURIs: {mirror}\nSuites: {suite} {suite}-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        f"Types: deb\nURIs: {security}\nSuites: {suite}-security\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )
