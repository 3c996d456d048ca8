"""`kjournal-dev up | down | status | logs | trace`: real Kafka and Cassandra, an OpenTelemetry
Collector, and kjournal's writer, reader and replicator, on loopback; `kjournal-dev kind ...` /
`images ...`: see kjournal_dev.kind."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kjournal_dev import chart_cli
from kjournal_dev.config import DevConfig
from kjournal_dev.dev_tokens import ALL_SCOPES, DevIssuer
from kjournal_dev.errors import DevError
from kjournal_dev.kind import cli as kind_cli
from kjournal_dev.platform import CASSANDRA, COLLECTOR, KAFKA, Platform
from kjournal_dev.services import SERVICES


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


def _trace(platform: Platform, args: argparse.Namespace) -> int:
    from kjournal_dev import waterfall

    spans_dir = platform.spans_dir()
    if args.trace_id is None:
        spans = waterfall.read_spans(spans_dir)
        roots = waterfall.latest_traces(spans, args.last)
        if not roots:
            print(f"no spans yet in {spans_dir}")
        for root in roots:
            print(
                f"{root.trace_id}  {root.service.removeprefix('kjournal-'):<10} {root.name} "
                f"({root.duration_ns / 1e6:,.1f} ms)"
            )
        return 0
    trace_id = args.trace_id.strip().lower()
    lines = waterfall.render_trace(trace_id, waterfall.read_spans(spans_dir, mentioning=trace_id))
    if not lines:
        print(
            f"kjournal-dev: no spans of trace {trace_id} in {spans_dir} (spans reach the file "
            "about a second after they end)",
            file=sys.stderr,
        )
        return 1
    for line in lines:
        print(line)
    return 0


def _generated_doc(
    write: bool, path: Path, generated: Callable[[str], str], problem: str | None
) -> int:
    """`--write`: `path` becomes `generated(its text)`; else report `problem` (None: up to date)."""
    if write:
        path.write_text(generated(path.read_text() if path.exists() else ""))
        print(f"wrote {path}")
        return 0
    if problem is not None:
        print(f"kjournal-dev: {problem}", file=sys.stderr)
        return 1
    print(f"{path} is up to date")
    return 0


def _settings_docs(platform: Platform, args: argparse.Namespace) -> int:
    from kjournal_dev import settings_docs

    return _generated_doc(
        args.write,
        settings_docs.docs_path(),
        lambda current: settings_docs.render(),
        None if args.write else settings_docs.check(),
    )


def _metrics_docs(platform: Platform, args: argparse.Namespace) -> int:
    from kjournal_dev import metrics_docs

    return _generated_doc(
        args.write,
        metrics_docs.docs_path(),
        metrics_docs.render,
        None if args.write else metrics_docs.check(),
    )


def _prebuild(platform: Platform, args: argparse.Namespace) -> int:
    """Build now what `up`, the chart tools and `kind up` would build on first use: the
    collector (which `up` needs first), helm, then (unless --early) the rest of the kind
    toolchain. Each lands in the build cache whole or not at all, and a later step that needs
    one waits for a build under way instead of starting its own."""
    from kjournal_dev.collector_build import ensure_collector
    from kjournal_dev.helm import Helm
    from kjournal_dev.kind.tool import KindTool

    started = time.monotonic()
    if platform.config.collector:
        print(ensure_collector(platform.config, _report), flush=True)
    print(Helm(platform.config, _report).binary(), flush=True)
    if not args.early:
        for path in KindTool(platform.config, _report).build_tools():
            print(path, flush=True)
    _report(f"prebuild done in {time.monotonic() - started:.0f}s")
    return 0


def _token(platform: Platform, args: argparse.Namespace) -> int:
    issuer = DevIssuer(platform.config.auth_dir).ensure()
    print(issuer.mint(args.scope or ALL_SCOPES, topics=args.topic, ttl_s=args.ttl))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kjournal-dev",
        description="Run real Kafka and Cassandra on 127.0.0.1 for kjournal. "
        "Settings come from KJOURNAL_DEV_* variables (see README).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
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
    trace = sub.add_parser(
        "trace",
        help="print a trace from the collector as an indented waterfall (without TRACE_ID: list "
        "the latest traces)",
    )
    trace.add_argument("trace_id", nargs="?", metavar="TRACE_ID", help="32 hex digits")
    trace.add_argument("--last", type=int, default=20, help="how many traces to list")
    trace.set_defaults(run=_trace)
    docs = sub.add_parser(
        "settings-docs",
        help="check (or --write) docs/configuration.md against the services' settings classes",
    )
    docs.add_argument("--write", action="store_true", help="regenerate the file")
    docs.set_defaults(run=_settings_docs)
    metric_docs = sub.add_parser(
        "metrics-docs",
        help="check (or --write) docs/observability.md's metric table against the metrics "
        "catalogue (kjournal/metrics/catalogue.py)",
    )
    metric_docs.add_argument("--write", action="store_true", help="regenerate the table")
    metric_docs.set_defaults(run=_metrics_docs)
    prebuild = sub.add_parser(
        "prebuild",
        help="build ahead into the build cache what `up`, the chart tests and `kind up` build on "
        "first use: the collector, helm, then the rest of the kind toolchain",
    )
    prebuild.add_argument(
        "--early",
        action="store_true",
        help="only what the first test suites need: the collector and helm",
    )
    prebuild.set_defaults(run=_prebuild)
    kind_cli.register(sub)
    token = sub.add_parser(
        "token",
        help="print a bearer token from the dev issuer (its key: <state>/auth, mode 0600), "
        "for a writer and reader started with KJOURNAL_DEV_AUTH=true or `up --secure`",
    )
    token.add_argument(
        "--scope",
        action="append",
        choices=ALL_SCOPES,
        help="a scope to grant (repeatable; default: all of them)",
    )
    token.add_argument(
        "--topic",
        action="append",
        help="only this topic, or topics starting with P if written P* (repeatable; "
        "default: any topic)",
    )
    token.add_argument("--ttl", type=float, default=3600.0, help="seconds it stays valid")
    token.set_defaults(run=_token)
    chart_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        platform = Platform(DevConfig.from_env())
        code: int = args.run(platform, args)
    except DevError as err:
        print(f"kjournal-dev: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
