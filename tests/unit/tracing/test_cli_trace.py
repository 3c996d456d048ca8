"""The CLI's `--trace` sets tracing up as the services do (`kjournal.telemetry`), and samples
its command whatever the sampler variables say. In a fresh interpreter: a process installs its
tracer provider once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROGRAM = """
from kjournal.cli.tracing import traced
with traced("read") as trace_id:
    print("id", trace_id, flush=True)
"""


def _run(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(variables)
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, check=True
    )


def test_the_command_is_one_sampled_root_span_exported_by_the_services_set_up() -> None:
    done = _run(OTEL_TRACES_EXPORTER="console", OTEL_TRACES_SAMPLER="always_off")
    first, _, exported = done.stdout.partition("\n")
    trace_id = first.removeprefix("id ")
    span = json.loads(exported)
    assert span["name"] == "kjournal read"
    assert span["context"]["trace_id"] == f"0x{trace_id}"
    assert span["resource"]["attributes"]["service.name"] == "kjournal-cli"
    assert f"trace {trace_id}" in done.stderr


def test_without_tracing_the_requests_still_carry_one_trace() -> None:
    done = _run(OTEL_SDK_DISABLED="true")
    trace_id = done.stdout.strip().removeprefix("id ")
    assert len(trace_id) == 32
    assert done.stderr.strip() == f"trace {trace_id}"
