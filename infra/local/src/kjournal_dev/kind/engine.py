"""Our own Docker engine: Debian's dockerd with its data root in the cache and its socket, exec
root and PID under our state, started and stopped by PID, leaving the host's network as it was.

One engine per machine: a second dockerd would fight over docker0 and the iptables chains, so a
dockerd we did not start is an error, never something we stop.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kjournal_dev import process
from kjournal_dev.errors import DevError
from kjournal_dev.kind import hostnet
from kjournal_dev.kind import packages
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.settings import KindSettings

DOCKERD = Path("/usr/sbin/dockerd")
# Debian's client: BuildKit built in (a newer client without buildx refuses `--secret`).
DOCKER = Path("/usr/bin/docker")
RUNC = Path("/usr/sbin/runc")
CONTAINERD = Path("/usr/bin/containerd")

_ENGINE_PACKAGES = {
    "docker.io": DOCKERD,
    "containerd": CONTAINERD,
    "runc": RUNC,
    "iptables": Path("/usr/sbin/iptables"),
}
_CAP_SYS_RESOURCE = 24
_RUNTIME_NAME = "kjournal-runc"


def lacks_sys_resource(status: Path = Path("/proc/self/status")) -> bool:
    """Whether this host's capability bounding set lacks CAP_SYS_RESOURCE (the microVM quirk)."""
    for line in status.read_text().splitlines():
        if line.startswith("CapBnd:"):
            return not (int(line.split()[1], 16) >> _CAP_SYS_RESOURCE) & 1
    return False


@dataclass(frozen=True)
class EngineState:
    pid: int
    data_root: str
    run_dir: str

    @classmethod
    def load(cls, path: Path) -> EngineState | None:
        try:
            raw = json.loads(path.read_text())
            return cls(pid=int(raw["pid"]), data_root=raw["data_root"], run_dir=raw["run_dir"])
        except (FileNotFoundError, json.JSONDecodeError, KeyError, ValueError):
            return None


class Engine:
    def __init__(self, settings: KindSettings, progress: Progress) -> None:
        self.settings = settings
        self.progress = progress
        self.state_file = settings.kind_state / "engine.json"
        self.host_file = settings.kind_state / "host-before-engine.json"
        self.log_file = settings.log_dir / "dockerd.log"

    # --- environment for docker, kind, kubectl, helm ---
    def env(self) -> dict[str, str]:
        # kind runs `docker` from PATH: make it Debian's client, which matches the engine.
        links = self.settings.bin_dir  # also the toolchain's binaries (toolchain.py)
        if not (links / "docker").is_symlink():
            links.mkdir(parents=True, exist_ok=True)
            (links / "docker").symlink_to(DOCKER)
        path = os.pathsep.join([str(links), os.environ.get("PATH", "")])
        return {
            **os.environ,
            "PATH": path,
            "DOCKER_HOST": self.settings.docker_host,
            "DOCKER_BUILDKIT": "1",
            "KUBECONFIG": str(self.settings.kubeconfig),
        }

    def docker(self, *args: str) -> list[str]:
        return [str(DOCKER), *args]

    # --- state ---
    def running(self) -> EngineState | None:
        state = EngineState.load(self.state_file)
        if state is not None and process.is_running(state.pid, state.data_root):
            return state
        return None

    def _foreign_dockerd(self, ours: int | None) -> int | None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == ours:
                continue
            with contextlib.suppress(OSError, IndexError):
                stat = (entry / "stat").read_text()
                name, state = (
                    stat[stat.index("(") + 1 : stat.rindex(")")],
                    stat.rsplit(")", 1)[1].split()[0],
                )
                if name == "dockerd" and state != "Z":  # a zombie is a stopped one not reaped yet
                    return int(entry.name)
        return None

    # --- start / stop ---
    def start(self) -> bool:
        """Start dockerd unless ours already runs; True if it was started now."""
        if self.running() is not None:
            return False
        foreign = self._foreign_dockerd(None)
        if foreign is not None:
            raise DevError(
                f"another Docker engine (dockerd, pid {foreign}) runs on this machine; "
                "kjournal-dev starts its own (both would manage docker0 and iptables): stop that "
                "one first"
            )
        packages.ensure(self.progress, _ENGINE_PACKAGES, "the Docker engine")
        started = time.monotonic()
        settings = self.settings
        settings.kind_state.mkdir(parents=True, exist_ok=True)
        settings.run_dir.mkdir(parents=True, exist_ok=True)
        settings.docker_data_root.mkdir(parents=True, exist_ok=True)
        if not self.host_file.exists():
            hostnet.snapshot().save(self.host_file)
        config = self._write_daemon_config()
        cmd = [
            str(DOCKERD),
            "--data-root",
            str(settings.docker_data_root),
            "--exec-root",
            str(settings.run_dir / "exec"),
            "--pidfile",
            str(settings.run_dir / "dockerd.pid"),
            "--host",
            settings.docker_host,
            "--config-file",
            str(config),
        ]
        pid = process.spawn(cmd, self.log_file, cwd=settings.kind_state)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "pid": pid,
                    "data_root": str(settings.docker_data_root),
                    "run_dir": str(settings.run_dir),
                }
            )
        )
        tmp.replace(self.state_file)
        self._wait_ready(pid)
        self.progress.report(
            f"Docker engine started (pid {pid}, data root {settings.docker_data_root}) "
            f"in {elapsed(time.monotonic() - started)}"
        )
        return True

    def _write_daemon_config(self) -> Path:
        config: dict[str, object] = {"features": {"buildkit": True}}
        if lacks_sys_resource():
            wrapper = self.settings.run_dir / "runc-wrapper"
            source = resources.files("kjournal_dev.kind").joinpath("assets/runc-wrapper.py")
            wrapper.write_text(source.read_text().replace("@REAL_RUNC@", str(RUNC)))
            wrapper.chmod(0o755)
            config["runtimes"] = {_RUNTIME_NAME: {"path": str(wrapper)}}
            config["default-runtime"] = _RUNTIME_NAME
        path = self.settings.run_dir / "daemon.json"
        path.write_text(json.dumps(config, indent=2))
        return path

    def _wait_ready(self, pid: int, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        env = self.env()
        while True:
            try:
                probe = self.progress.capture(
                    self.docker("version", "--format", "{{.Server.Version}}"),
                    env=env,
                    check=False,
                    timeout=15,
                )
            except DevError:
                # A probe that hangs (a daemon still starting on a busy host): not ready yet.
                probe = None
            if probe is not None and probe.returncode == 0:
                return
            if not process.is_running(pid):
                raise DevError(f"dockerd exited during start-up; log: {self.log_file}")
            if time.monotonic() > deadline:
                raise DevError(
                    f"dockerd did not answer within {timeout_s:.0f} s; log: {self.log_file}"
                )
            time.sleep(0.3)

    def stop(self) -> list[str]:
        """Stop our dockerd by PID (and anything it left running), then restore the host's
        network; returns what was done, for the report."""
        done: list[str] = []
        state = EngineState.load(self.state_file)
        if state is not None and process.is_running(state.pid, state.data_root):
            _terminate(state.pid)
            done.append(f"stopped dockerd (pid {state.pid})")
        run_dir = Path(state.run_dir) if state else self.settings.run_dir
        for pid in _processes_mentioning(str(run_dir)):
            _terminate(pid, grace_s=10)
            done.append(f"stopped leftover pid {pid}")
        self.state_file.unlink(missing_ok=True)
        # (before restoring: umount itself may create /run/mount, which the restore removes)
        _unmount_below(run_dir)
        # A killed dockerd also leaves its data root mounted on itself (and overlays under it);
        # never touch them while any dockerd runs (it may be another checkout's, on this root).
        if self._foreign_dockerd(None) is None:
            data_root = Path(state.data_root) if state else self.settings.docker_data_root
            _unmount_below(data_root, including_root=True)
        shutil.rmtree(run_dir, ignore_errors=True)
        before = hostnet.HostState.load(self.host_file)
        if before is not None:
            undone = hostnet.restore(before)
            if undone:
                done.append(f"restored the host ({len(undone)} changes undone)")
            self.host_file.unlink(missing_ok=True)
        return done


def _terminate(pid: int, grace_s: float = 60) -> None:
    """SIGTERM one process (dockerd stops its containers and containerd itself), SIGKILL late."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not process.is_running(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and process.is_running(pid):
        time.sleep(0.1)


def _processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line mentions `text` (containerd and shims under our run directory)."""
    found = []
    needle = text.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _unmount_below(root: Path, *, including_root: bool = False) -> None:
    """Unmount whatever a killed engine left mounted under `root` (deepest first)."""
    prefix = str(root) + "/"
    try:
        mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return
    doomed = [m for m in mounts if m.startswith(prefix) or (including_root and m == str(root))]
    for point in sorted(doomed, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)
