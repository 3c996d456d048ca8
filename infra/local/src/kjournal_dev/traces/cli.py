"""`kjournal-dev trace`: a trace from the local collector's file (registered by
kjournal_dev.cli)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _trace(platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.traces import waterfall

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


def register(sub: Any) -> None:
    trace = sub.add_parser(
        "trace",
        help="print a trace from the collector as an indented waterfall (without TRACE_ID: list "
        "the latest traces)",
    )
    trace.add_argument("trace_id", nargs="?", metavar="TRACE_ID", help="32 hex digits")
    trace.add_argument("--last", type=int, default=20, help="how many traces to list")
    trace.set_defaults(run=_trace)
