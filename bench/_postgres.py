"""A throw-away PostgreSQL server for the benches (bench/eventsourcing.py's second baseline).

`postgres_server()` runs Debian's PostgreSQL server binaries (`/usr/lib/postgresql/<version>/bin`,
the `postgresql` package; `KJOURNAL_BENCH_PG_BIN` names another folder) on a free loopback port,
with its data, its Unix socket, its log and its password file in one temporary folder:

    initdb -D <tmp>/data -U bench --auth=scram-sha-256 --pwfile=<tmp>/password ...
    pg_ctl -D <tmp>/data -l <tmp>/postgres.log -w -o "-c listen_addresses=127.0.0.1 -c port=N
           -c unix_socket_directories=<tmp>" start
    CREATE DATABASE bench                      (over TCP, as `bench`, with the random password)
    ...
    pg_ctl -D <tmp>/data -m fast -w stop       (then the folder is removed)

PostgreSQL refuses to run as root, so when this process is root each of those commands runs as
the `postgres` user Debian's package creates (`runuser -u postgres --`), and the folder is handed
to that user first. The server keeps PostgreSQL's defaults (fsync and synchronous_commit on: a
commit is on disk when `save()` returns). The block's end stops and removes the server whatever
happened in it, SIGTERM and SIGHUP included (they are turned into SystemExit while it runs).
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import psycopg

from bench._http import free_port

PG_ROOT = Path("/usr/lib/postgresql")
BIN_ENV = "KJOURNAL_BENCH_PG_BIN"
SERVER_USER = "postgres"  # who runs the server when this process is root
BINARIES = ("initdb", "pg_ctl", "postgres")
HOST = "127.0.0.1"
SUPERUSER = "bench"
DBNAME = "bench"

MISSING = (
    "no PostgreSQL server found: bench.eventsourcing's PostgreSQL baseline needs initdb, pg_ctl "
    "and postgres, looked for in {where}. On Debian 12 install the server package as root, "
    "`apt-get update && apt-get install -y postgresql` (PostgreSQL 15, in "
    "/usr/lib/postgresql/15/bin; the bench starts a server of its own, the package's cluster "
    f"need not run), or set {BIN_ENV} to a folder holding those three programs."
)


@dataclass(frozen=True)
class PostgresServer:
    """How to reach a running throw-away server."""

    host: str
    port: int
    user: str
    password: str
    dbname: str
    folder: Path

    def eventsourcing_env(self) -> dict[str, str]:
        """The settings of the `eventsourcing` library's PostgreSQL module for this server (its
        other settings, the connection pool's among them, stay the library's defaults)."""
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": self.dbname,
            "POSTGRES_HOST": self.host,
            "POSTGRES_PORT": str(self.port),
            "POSTGRES_USER": self.user,
            "POSTGRES_PASSWORD": self.password,
        }


def _version_key(bin_dir: Path) -> tuple[int, ...]:
    """`/usr/lib/postgresql/15/bin` → (15,): the newest version is preferred."""
    return tuple(int(part) for part in re.findall(r"\d+", bin_dir.parent.name)) or (0,)


def has_binaries(folder: Path) -> bool:
    return all((folder / name).is_file() for name in BINARIES)


def find_bin_dir(root: Path = PG_ROOT, override: str | None = None) -> Path:
    """The folder of the server binaries: `override` (KJOURNAL_BENCH_PG_BIN) if given, else the
    newest `<root>/<version>/bin` holding them; SystemExit saying how to install them if none."""
    if override:
        folder = Path(override)
        if has_binaries(folder):
            return folder
        raise SystemExit(MISSING.format(where=f"{folder} ({BIN_ENV})"))
    found = sorted((d for d in root.glob("*/bin") if has_binaries(d)), key=_version_key)
    if not found:
        raise SystemExit(MISSING.format(where=f"{root}/<version>/bin"))
    return found[-1]


def run_as_prefix(euid: int, server_user: str = SERVER_USER) -> list[str]:
    """What to put before each server command: nothing for an ordinary user, `runuser -u
    postgres --` for root (postgres: "root execution of the PostgreSQL server is not
    permitted")."""
    if euid != 0:
        return []
    return [shutil.which("runuser") or "/usr/sbin/runuser", "-u", server_user, "--"]


def initdb_command(
    bin_dir: Path, data_dir: Path, password_file: Path, superuser: str = SUPERUSER
) -> list[str]:
    return [
        str(bin_dir / "initdb"),
        "-D",
        str(data_dir),
        "-U",
        superuser,
        "--auth=scram-sha-256",
        f"--pwfile={password_file}",
        "--encoding=UTF8",
        "--locale=C",
        "--no-sync",  # initdb's own files only: the server's commits are fsynced as usual
    ]


def server_options(port: int, socket_dir: Path, host: str = HOST) -> str:
    """The postgres options pg_ctl passes on (its -o, read by a shell: quoted)."""
    settings = {
        "listen_addresses": host,
        "port": str(port),
        "unix_socket_directories": str(socket_dir),
    }
    return " ".join(f"-c {shlex.quote(f'{name}={value}')}" for name, value in settings.items())


def start_command(
    bin_dir: Path, data_dir: Path, log_file: Path, port: int, socket_dir: Path
) -> list[str]:
    return [
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data_dir),
        "-l",
        str(log_file),
        "-w",
        "-t",
        "60",
        "-o",
        server_options(port, socket_dir),
        "start",
    ]


def stop_command(bin_dir: Path, data_dir: Path) -> list[str]:
    return [str(bin_dir / "pg_ctl"), "-D", str(data_dir), "-m", "fast", "-w", "-t", "60", "stop"]


def postmaster_pid(data_dir: Path) -> int | None:
    """The server's process id, from the first line of its postmaster.pid (None: not running)."""
    try:
        first = (data_dir / "postmaster.pid").read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def _run(command: Sequence[str], prefix: list[str], cwd: Path, what: str, log: Path) -> None:
    result = subprocess.run(
        [*prefix, *command], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    if result.returncode != 0:
        tail = ""
        if log.is_file():
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise SystemExit(
            f"PostgreSQL {what} failed ({result.returncode}): {shlex.join([*prefix, *command])}\n"
            f"{result.stdout}{result.stderr}{tail}"
        )


def _hand_over(folder: Path, user: str) -> None:
    """Give the folder to the user who runs the server (root's temporary folder is 0700)."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise SystemExit(
            "PostgreSQL refuses to run as root and there is no "
            f"`{user}` user to run it as (Debian's postgresql package creates one): run the "
            f"bench as an ordinary user, or create it: `useradd --system {user}`"
        ) from None
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _stop(bin_dir: Path, data_dir: Path, prefix: list[str], cwd: Path) -> None:
    """pg_ctl's fast shutdown; if that fails, the postmaster by its id: SIGQUIT (immediate
    shutdown), then SIGKILL."""
    pid = postmaster_pid(data_dir)
    if pid is None:
        return
    try:
        result = subprocess.run(
            [*prefix, *stop_command(bin_dir, data_dir)],
            cwd=cwd,
            capture_output=True,
            timeout=90,
            check=False,
        )
        if result.returncode == 0:
            return
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGQUIT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


@contextmanager
def _signals_exit() -> Iterator[None]:
    """SIGTERM and SIGHUP raise SystemExit while the block runs, so that `finally` stops the
    server (main thread only: Python delivers signals there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, leave) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a server, create its database, yield how to reach it; stop and remove it after."""
    bin_dir = find_bin_dir(override=os.environ.get(BIN_ENV))
    prefix = run_as_prefix(os.geteuid())
    password = secrets.token_hex(16)
    with _signals_exit():
        folder = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
        data_dir = folder / "data"
        log_file = folder / "postgres.log"
        try:
            password_file = folder / "password"
            password_file.write_text(password + "\n")
            if prefix:
                _hand_over(folder, prefix[2])
            _run(
                initdb_command(bin_dir, data_dir, password_file), prefix, folder, "initdb", log_file
            )
            password_file.unlink()
            port = free_port()
            try:
                _run(
                    start_command(bin_dir, data_dir, log_file, port, folder),
                    prefix,
                    folder,
                    "start",
                    log_file,
                )
                with psycopg.connect(
                    host=HOST,
                    port=port,
                    user=SUPERUSER,
                    password=password,
                    dbname="postgres",
                    autocommit=True,
                ) as connection:
                    connection.execute(f"CREATE DATABASE {DBNAME}")
                yield PostgresServer(HOST, port, SUPERUSER, password, DBNAME, folder)
            finally:
                _stop(bin_dir, data_dir, prefix, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def server_version(server: PostgresServer) -> str:
    with psycopg.connect(
        host=server.host,
        port=server.port,
        user=server.user,
        password=server.password,
        dbname=server.dbname,
    ) as connection:
        row = connection.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "unknown"
