"""`kjournal-dev up | status | down | logs`: the loopback platform's commands (registered by
kjournal_dev.cli)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from kjournal_dev.platform.jobs import run_job
from kjournal_dev.platform.lifecycle import CASSANDRA
from kjournal_dev.platform.lifecycle import COLLECTOR
from kjournal_dev.platform.lifecycle import KAFKA
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.platform.services import SERVICES


def _report(line: str) -> None:
    print(f"kjournal-dev: {line}", flush=True)


def _up(platform: Platform, args: argparse.Namespace) -> int:
    if args.secure and not platform.config.secure:
        platform = Platform(platform.config.model_copy(update={"secure": True}))
    endpoints = platform.up(report=_report)
    verb = "started" if endpoints.started else "already running (reused)"
    print(f"platform {verb}")
    print(
        f"  kafka bootstrap   {endpoints.kafka_bootstrap}   topics: {', '.join(endpoints.topics)}"
    )
    print(
        f"  cassandra         {endpoints.cassandra_host}:{endpoints.cassandra_port}   "
        f"keyspace: {endpoints.keyspace}"
    )
    for name, url in endpoints.services.items():
        extra = "/healthz, /metrics" if name == "replicator" else f"OpenAPI: {url}/docs"
        print(f"  {name:<17} {url}   ({extra})")
    if endpoints.otlp_endpoint is not None:
        print(f"  collector (OTLP)  {endpoints.otlp_endpoint}   spans: {endpoints.spans_dir}")
    print(f"  spark kafka jars  {endpoints.spark_kafka_jars}")
    print(f"  data and logs     {endpoints.data_dir}")
    if platform.config.secure:
        print(
            f"  secured           credentials in {platform.config.credentials_file} (0600); "
            "a token for the HTTP services: scripts/dev token"
        )
    if args.supervise:
        print("supervising: whatever exits is restarted on its data (Ctrl-C stops supervising)")
        platform.supervise(report=_report)
    return 0


def _status(platform: Platform, args: argparse.Namespace) -> int:
    rows = platform.status()
    for row in rows:
        state = "healthy" if row.healthy else ("unhealthy" if row.running else "stopped")
        pid = str(row.pid) if row.pid else "-"
        print(
            f"{row.name:<10} {state:<10} pid {pid:<8} {row.address:<22} {row.detail:<16} {row.log_file}"
        )
    # A service `up` was told not to start (tests do that) does not make the platform unhealthy.
    required = [row for row in rows if row.name in (KAFKA, CASSANDRA) or row.pid is not None]
    return 0 if all(row.healthy for row in required) else 1


def _down(platform: Platform, args: argparse.Namespace) -> int:
    stopped = platform.down(keep_data=args.keep_data)
    print("stopped " + ", ".join(stopped) if stopped else "nothing was running")
    return 0


def _logs(platform: Platform, args: argparse.Namespace) -> int:
    path = platform.log_file(args.component)
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    for line in lines[-args.lines :]:
        print(line)
    if args.follow:
        _follow(path)
    return 0


def _follow(path: Path) -> None:
    with path.open(errors="replace") as stream:
        stream.seek(0, 2)
        try:
            while True:
                line = stream.readline()
                if line:
                    print(line, end="", flush=True)
                else:
                    time.sleep(0.3)
        except KeyboardInterrupt:
            return


def _expire(platform: Platform, args: argparse.Namespace) -> int:
    return run_job(
        platform.config, "expiry", [*args.topics, *(["--dry-run"] if args.dry_run else [])]
    )


def _check(platform: Platform, args: argparse.Namespace) -> int:
    flags = [flag for flag, on in (("--local", args.local), ("--repair", args.repair)) if on]
    return run_job(platform.config, "check", [*args.topics, *flags, *args.more])


def register(sub: Any) -> None:
    up = sub.add_parser(
        "up",
        help="fetch (once), start and wait for Kafka and Cassandra; create topics and schema; "
        "start the writer, reader and replicator; whatever died is restarted on its data",
    )
    up.add_argument(
        "--secure",
        action="store_true",
        help="Kafka with SCRAM users and ACLs, Cassandra with roles, HTTP authentication "
        "(KJOURNAL_DEV_SECURE=true does the same; a secured platform stays so until `down`)",
    )
    up.add_argument(
        "--supervise",
        action="store_true",
        help="then stay in the foreground, restarting whatever exits (with backoff)",
    )
    up.set_defaults(run=_up)
    sub.add_parser("status", help="probe each service; exit 1 unless all are healthy").set_defaults(
        run=_status
    )
    down = sub.add_parser("down", help="stop every process `up` started and free its ports")
    down.add_argument("--keep-data", action="store_true", help="keep the run's data directory")
    down.set_defaults(run=_down)
    logs = sub.add_parser("logs", help="print a service's log")
    logs.add_argument(
        "component", choices=[KAFKA, CASSANDRA, COLLECTOR, *(spec.name for spec in SERVICES)]
    )
    logs.add_argument("-n", "--lines", type=int, default=50)
    logs.add_argument("-f", "--follow", action="store_true")
    logs.set_defaults(run=_logs)
    expire = sub.add_parser(
        "expire",
        help="run the expiry job once: purge, through Kafka, the journals whose expiry has come "
        "(as its own principal on a secured platform)",
    )
    expire.add_argument("topics", nargs="*", help="default: the platform's journal topics")
    expire.add_argument("--dry-run", action="store_true", help="decide, purge nothing")
    expire.set_defaults(run=_expire)
    check = sub.add_parser(
        "check",
        help="compare Cassandra with the fold of Kafka's records (a Spark job in local mode, or "
        "--local in process); --repair rewrites what differs",
    )
    check.add_argument("topics", nargs="+")
    check.add_argument("--local", action="store_true")
    check.add_argument("--repair", action="store_true")
    check.add_argument("more", nargs=argparse.REMAINDER, help="more options of the check")
    check.set_defaults(run=_check)
