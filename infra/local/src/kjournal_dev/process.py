"""Start detached processes, stop them by PID, and check the TCP ports they hold."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from kjournal_dev.errors import DevError

# Children started by this process stay referenced (a collected Popen whose process still runs
# warns) and are reaped through their Popen, which also keeps them from lingering as zombies.
_children: dict[int, subprocess.Popen[bytes]] = {}
# How reaped children ended (their Popen's returncode), for `how_it_ended`.
_ended: dict[int, int | None] = {}


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def require_free_ports(host: str, ports: dict[str, tuple[int, str]]) -> None:
    """Fail with one line naming the first port (and its setting) that something else holds."""
    for label, (port, variable) in ports.items():
        if not port_is_free(host, port):
            raise DevError(
                f"port {port} on {host} ({label}) is already in use: stop what holds it "
                f"or choose another port with {variable}"
            )


def spawn(cmd: Sequence[str], log_file: Path, cwd: Path, env: dict[str, str] | None = None) -> int:
    """Start `cmd` in its own session, detached from this process, logging to `log_file`."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as log:
        proc = subprocess.Popen(
            list(cmd),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    _children[proc.pid] = proc
    return proc.pid


def is_running(pid: int, marker: str | None = None) -> bool:
    """True if `pid` is alive (and, given a marker, is not another process that took a freed
    PID: a child this process started and has not reaped is itself; any other process's command
    line must contain the marker)."""
    child = _children.get(pid)
    if child is not None and child.poll() is not None:
        _ended[pid] = _children.pop(pid).returncode
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            # A JVM's main thread may exit while its other threads still shut down: the process
            # shows as a zombie, yet it runs (and holds its ports) until the last thread ends.
            if _live_threads(pid):
                return True
            if child is not None:
                # Its last thread has left /proc but may not have finished exiting: until the
                # kernel lets it be reaped, it still is running (and Popen must do the reaping,
                # or it warns later of a child it thinks still runs).
                if child.poll() is None:
                    return True
                _ended[pid] = _children.pop(pid).returncode
                return False
            _reap(pid)
            return False
        if marker is not None and child is None:
            # Only a process this one did not start can be another that took a freed PID. A
            # child's command line is not asked: it is empty for a moment while the child execs
            # (a service waited for right after its start was once taken for ended).
            return marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (FileNotFoundError, IndexError):
        return False
    return True


def how_it_ended(pid: int) -> str:
    """How a process `spawn` started and `is_running` found gone ended, as far as this process
    can tell (a status of 0 is also what Python reports for a child another waiter reaped)."""
    if pid not in _ended:
        return "not a child of this process: its exit status is unknown"
    code = _ended[pid]
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _live_threads(pid: int) -> bool:
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def stop(pid: int, marker: str | None = None, grace_s: float = 30.0) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after `grace_s`."""
    if not is_running(pid, marker):
        return
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_running(pid):
            return
        time.sleep(0.2)
    _signal_group(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and is_running(pid):
        time.sleep(0.1)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return
    except PermissionError:
        os.kill(pid, sig)


def wait_ports_free(host: str, ports: Sequence[int], timeout_s: float = 15.0) -> list[int]:
    """Wait until none of `ports` is held; return those still held at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        held = [port for port in ports if not port_is_free(host, port)]
        if not held or time.monotonic() >= deadline:
            return held
        time.sleep(0.2)


def tail(path: Path, lines: int = 40) -> str:
    try:
        content = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(content[-lines:])
