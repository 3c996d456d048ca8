"""bench/_postgres.py: where the server binaries are found, the commands that start and stop a
throw-away server, and what the eventsourcing library's PostgreSQL module is given."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from bench._postgres import BIN_ENV
from bench._postgres import PostgresServer
from bench._postgres import find_bin_dir
from bench._postgres import initdb_command
from bench._postgres import postmaster_pid
from bench._postgres import run_as_prefix
from bench._postgres import server_options
from bench._postgres import start_command
from bench._postgres import stop_command


def _install(root: Path, version: str, names: tuple[str, ...] = ("initdb", "pg_ctl", "postgres")):
    folder = root / version / "bin"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text("")
    return folder


def test_the_newest_version_holding_every_program_is_chosen(tmp_path: Path) -> None:
    _install(tmp_path, "9.6")
    newest = _install(tmp_path, "15")
    _install(tmp_path, "16", names=("initdb", "pg_ctl"))  # the client only: no server
    assert find_bin_dir(tmp_path) == newest


def test_a_missing_server_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"apt-get install -y postgresql") as raised:
        find_bin_dir(tmp_path)
    assert str(tmp_path) in str(raised.value)
    assert BIN_ENV in str(raised.value)


def test_the_override_is_taken_as_it_is_or_refused(tmp_path: Path) -> None:
    elsewhere = _install(tmp_path / "opt", "17")
    _install(tmp_path, "15")
    assert find_bin_dir(tmp_path, override=str(elsewhere)) == elsewhere
    with pytest.raises(SystemExit, match=BIN_ENV):
        find_bin_dir(tmp_path, override=str(tmp_path / "nowhere"))


def test_root_runs_the_server_as_the_postgres_user_and_others_as_themselves() -> None:
    assert run_as_prefix(1000) == []
    prefix = run_as_prefix(0)
    assert Path(prefix[0]).name == "runuser"
    assert prefix[1:] == ["-u", "postgres", "--"]
    assert run_as_prefix(0, "bench")[1:] == ["-u", "bench", "--"]


def test_initdb_sets_a_password_and_no_trust(tmp_path: Path) -> None:
    command = initdb_command(Path("/pg/bin"), tmp_path / "data", tmp_path / "password")
    assert command[:3] == ["/pg/bin/initdb", "-D", str(tmp_path / "data")]
    assert "--auth=scram-sha-256" in command
    assert f"--pwfile={tmp_path / 'password'}" in command
    assert command[3:5] == ["-U", "bench"]
    assert not any("trust" in part for part in command)


def test_the_server_listens_on_loopback_only_with_its_socket_in_the_folder() -> None:
    options = server_options(54321, Path("/tmp/bench postgres"))
    assert shlex.split(options) == [
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "port=54321",
        "-c",
        "unix_socket_directories=/tmp/bench postgres",
    ]


def test_pg_ctl_waits_for_the_start_and_stops_fast(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "postgres.log"
    start = start_command(Path("/pg/bin"), data, log, 54321, tmp_path)
    assert start[0] == "/pg/bin/pg_ctl"
    assert start[-1] == "start"
    assert start[start.index("-D") + 1] == str(data)
    assert start[start.index("-l") + 1] == str(log)
    assert "-w" in start
    assert start[start.index("-o") + 1] == server_options(54321, tmp_path)
    stop = stop_command(Path("/pg/bin"), data)
    assert stop[-1] == "stop"
    assert stop[stop.index("-m") + 1] == "fast"
    assert "-w" in stop


def test_the_postmaster_is_found_by_its_pid_file(tmp_path: Path) -> None:
    assert postmaster_pid(tmp_path) is None
    (tmp_path / "postmaster.pid").write_text("4242\n/tmp/data\n1700000000\n54321\n")
    assert postmaster_pid(tmp_path) == 4242
    (tmp_path / "postmaster.pid").write_text("")
    assert postmaster_pid(tmp_path) is None


def test_the_library_module_gets_the_server_s_address_and_credentials(tmp_path: Path) -> None:
    server = PostgresServer("127.0.0.1", 54321, "bench", "secret", "bench", tmp_path)
    assert server.eventsourcing_env() == {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": "bench",
        "POSTGRES_HOST": "127.0.0.1",
        "POSTGRES_PORT": "54321",
        "POSTGRES_USER": "bench",
        "POSTGRES_PASSWORD": "secret",
    }
