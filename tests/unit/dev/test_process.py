"""kjournal-dev's process bookkeeping: a process is running until its last thread ends."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kjournal_dev import process

# The main thread leaves (as a JVM's may while it shuts down) and another thread goes on.
_MAIN_LEAVES_FIRST = """
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(2,)).start()
ctypes.CDLL(None).pthread_exit(None)
"""


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_process_whose_main_thread_left_still_runs_then_is_reaped(tmp_path: Path):
    pid = process.spawn([sys.executable, "-c", _MAIN_LEAVES_FIRST], tmp_path / "log", cwd=tmp_path)
    deadline = time.monotonic() + 10
    while _state(pid) != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert process.is_running(pid)
    deadline = time.monotonic() + 10
    while process.is_running(pid):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert pid not in process._children  # reaped through its Popen: nothing left to warn about


def test_a_child_whose_last_thread_ends_while_it_is_looked_at_is_reaped_through_its_popen(
    tmp_path: Path,
):
    # The window CI once hit: the first poll() sees the child running, its last thread ends,
    # and the /proc checks then find a zombie with no live thread. It must be reaped through its
    # Popen (which otherwise warns later of a child it thinks still runs), not behind its back.
    pid = process.spawn([sys.executable, "-c", "pass"], tmp_path / "log", cwd=tmp_path)
    deadline = time.monotonic() + 10
    while _state(pid) != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = process._children[pid]
    real_poll = child.poll
    polls = 0

    def first_sees_it_running() -> int | None:
        nonlocal polls
        polls += 1
        return None if polls == 1 else real_poll()

    child.poll = first_sees_it_running  # type: ignore[method-assign]
    assert not process.is_running(pid)
    assert pid not in process._children
    assert child.returncode == 0


def test_how_a_child_ended_is_told_once_it_is_found_gone(tmp_path: Path):
    killed = process.spawn(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
        tmp_path / "a",
        cwd=tmp_path,
    )
    failed = process.spawn(
        [sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "b", cwd=tmp_path
    )
    for pid in (killed, failed):
        deadline = time.monotonic() + 10
        while process.is_running(pid):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert process.how_it_ended(killed) == "killed by SIGSEGV"
    assert process.how_it_ended(failed) == "exit status 3"
    assert process.how_it_ended(1) == "not a child of this process: its exit status is unknown"


def test_a_child_runs_whatever_its_command_line_shows_and_others_must_show_the_marker(
    tmp_path: Path,
):
    # A child's command line is empty for a moment while it execs: a service polled right after
    # its start was once taken for ended. A child not yet reaped cannot be another process, so
    # its command line is not asked; any other process's must hold the marker.
    pid = process.spawn(
        [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "log", cwd=tmp_path
    )
    try:
        assert process.is_running(pid, "a-marker-its-command-line-lacks")
    finally:
        process.stop(pid)
    assert not process.is_running(pid, "a-marker-its-command-line-lacks")
    own_executable = Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()
    assert process.is_running(os.getpid(), own_executable)
    assert not process.is_running(os.getpid(), "a-marker-its-command-line-lacks")
