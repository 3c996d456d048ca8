"""Where the kind tool keeps things, derived from kjournal-dev's build cache and state directory.

Everything expensive and reusable (Go caches, built binaries, the debootstrapped Debian, Docker's
data root with its images) lives in the per-machine build cache (`KJOURNAL_DEV_BUILD_CACHE`,
build_cache.py), shared by every checkout; what belongs to one running engine or cluster (PID
file, logs, kubeconfig, the host's network state before dockerd changed it, the `bin` folder of
links put on PATH) lives under the checkout's state directory (`KJOURNAL_DEV_STATE_DIR`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root
from kjournal_dev.errors import DevError

Mode = Literal["auto", "offline", "registry"]
_MODES: tuple[Mode, ...] = ("auto", "offline", "registry")


@dataclass(frozen=True)
class KindSettings:
    build_cache_dir: Path
    state_dir: Path
    repo_root: Path
    cluster_name: str = "kjournal"
    mode: Mode = "auto"
    debian_mirror: str = "http://deb.debian.org/debian"
    ca_bundle: Path = Path("/etc/ssl/certs/ca-certificates.crt")

    # --- build cache: built once, reused ---
    @property
    def kind_cache(self) -> Path:
        return self.build_cache_dir / "kind"

    @property
    def tools_dir(self) -> Path:
        """One entry per tool and version (`kubernetes-v1.34.4/`), each holding its binaries."""
        return self.kind_cache / "tools"

    @property
    def src_dir(self) -> Path:
        """Generated Go wrapper modules and build contexts."""
        return self.kind_cache / "src"

    @property
    def rootfs_tar(self) -> Path:
        return self.kind_cache / "debian-bookworm-minbase.tar"

    @property
    def docker_data_root(self) -> Path:
        return self.build_cache_dir / "docker"

    # --- state: one engine, one cluster ---
    @property
    def kind_state(self) -> Path:
        return self.state_dir / "kind"

    @property
    def bin_dir(self) -> Path:
        """Links to the binaries this checkout uses (and Debian's docker client), put on PATH."""
        return self.kind_state / "bin"

    @property
    def log_dir(self) -> Path:
        return self.kind_state / "logs"

    @property
    def kubeconfig(self) -> Path:
        return self.kind_state / "kubeconfig"

    @property
    def run_dir(self) -> Path:
        """dockerd's exec root and socket: unix socket paths must stay short, so under /run, with
        a name derived from the state directory (two checkouts never share one)."""
        digest = hashlib.sha256(str(self.state_dir).encode()).hexdigest()[:12]
        return Path("/run") / f"kjournal-dev-{digest}"

    @property
    def docker_host(self) -> str:
        return f"unix://{self.run_dir / 'docker.sock'}"

    @classmethod
    def from_env(cls, config: DevConfig, env: dict[str, str] | None = None) -> KindSettings:
        env = dict(os.environ if env is None else env)
        raw = env.get("KJOURNAL_DEV_KIND_MODE", "auto").strip() or "auto"
        mode = next((known for known in _MODES if known == raw), None)
        if mode is None:
            raise DevError(f"KJOURNAL_DEV_KIND_MODE={raw!r} is not one of {', '.join(_MODES)}")
        return cls(
            build_cache_dir=config.build_cache_dir,
            state_dir=config.state_dir,
            repo_root=find_repo_root(),
            cluster_name=env.get("KJOURNAL_DEV_KIND_CLUSTER", "").strip() or "kjournal",
            mode=mode,
            debian_mirror=env.get("KJOURNAL_DEV_DEBIAN_MIRROR", "").strip()
            or "http://deb.debian.org/debian",
        )
