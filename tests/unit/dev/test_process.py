"""kjournal-dev's process bookkeeping: a process is running until its last thread ends."""

from __future__ import annotations

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
