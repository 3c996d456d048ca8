"""Long build steps with a heartbeat: what is being built, how long it has taken, never minutes of
silence; on failure one line naming the step and its log."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from kjournal_dev.errors import DevError

Reporter = Callable[[str], None]

HEARTBEAT_S = 20.0


def elapsed(seconds: float) -> str:
    """`7.3s`, `2m05s`."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def _last_line(log_file: Path, limit: int = 90) -> str:
    try:
        with log_file.open("rb") as stream:
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(max(0, size - 4096))
            lines = [line.strip() for line in stream.read().decode(errors="replace").splitlines()]
    except FileNotFoundError:
        return ""
    text = next((line for line in reversed(lines) if line), "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Progress:
    """Runs commands with their output in a log file under `log_dir`, reporting start, a heartbeat
    every HEARTBEAT_S seconds (with the log's last line) and the end with the elapsed time."""

    def __init__(self, report: Reporter, log_dir: Path) -> None:
        self.report = report
        self.log_dir = log_dir

    def log_path(self, name: str) -> Path:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self.log_dir / f"{name}.log"

    @contextlib.contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Report `what ...` and `what: done in Xs` around a block of Python work."""
        started = time.monotonic()
        self.report(f"{what} ...")
        yield
        self.report(f"{what}: done in {elapsed(time.monotonic() - started)}")

    def run(
        self,
        what: str,
        cmd: Sequence[str],
        log_name: str,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdin: IO[bytes] | None = None,
        quiet: bool = False,
    ) -> Path:
        """Run `cmd` to completion; DevError (one line, with the log path) if it fails."""
        log_file = self.log_path(log_name)
        started = time.monotonic()
        if not quiet:
            self.report(f"{what} ...")
        with log_file.open("ab") as log:
            log.write(f"\n$ {' '.join(cmd)}\n".encode())
            log.flush()
            try:
                proc = subprocess.Popen(
                    list(cmd),
                    stdin=stdin if stdin is not None else subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=dict(env) if env is not None else None,
                    cwd=cwd,
                )
            except OSError as exc:
                raise DevError(f"{what} failed: cannot run {cmd[0]} ({exc.strerror})") from None
            self._wait(proc, what, log_file, started)
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            raise DevError(
                f"{what} failed (exit {proc.returncode}) after {elapsed(seconds)}; log: {log_file}"
            )
        if not quiet:
            self.report(f"{what}: done in {elapsed(seconds)}")
        return log_file

    def _wait(
        self, proc: subprocess.Popen[bytes], what: str, log_file: Path, started: float
    ) -> None:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                last = _last_line(log_file)
                detail = f": {last}" if last else ""
                self.report(f"  {what}: {elapsed(time.monotonic() - started)}{detail}")

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            proc.wait()
        except BaseException:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            if proc.poll() is None:
                proc.kill()
            raise
        finally:
            stop.set()
            thread.join()

    def capture(
        self,
        cmd: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        check: bool = True,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """A short command whose output we need (not logged); DevError if it fails and `check`."""
        try:
            result = subprocess.run(
                list(cmd),
                capture_output=True,
                text=True,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                check=False,
                timeout=timeout,
            )
        except OSError as exc:
            raise DevError(f"cannot run {cmd[0]}: {exc.strerror}") from None
        except subprocess.TimeoutExpired:
            raise DevError(f"`{' '.join(cmd[:3])} ...` did not finish within {timeout} s") from None
        if check and result.returncode != 0:
            message = (result.stderr or result.stdout).strip().splitlines()
            raise DevError(
                f"`{' '.join(cmd[:4])} ...` failed (exit {result.returncode}): "
                + (message[-1] if message else "no output")
            )
        return result
