"""`recording()` sees a tracer provider installed later, or named by the environment; with
`OTEL_SDK_DISABLED=true` it does not look for one; under a span not sampled it is false. Each case runs in a
fresh interpreter: a process installs its tracer provider once."""

from __future__ import annotations

import os
import subprocess
import sys

LATE = """
from kjournal.spans import recording
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
before = [recording() for _ in range(3)]
trace.set_tracer_provider(TracerProvider())
print(before, recording())
"""

NAMED = """
from kjournal.spans import recording
print(recording())
"""


def _run(program: str, **variables: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(variables)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def test_a_provider_installed_later_is_seen() -> None:
    assert _run(LATE) == "[False, False, False] True"


def test_a_provider_named_by_the_environment_is_loaded() -> None:
    assert _run(NAMED, OTEL_PYTHON_TRACER_PROVIDER="sdk_tracer_provider") == "True"


DISABLED = """
from kjournal.spans import installed
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
print(installed())
"""

UNSAMPLED = """
from kjournal.spans import installed, recording
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
context = trace.SpanContext(1, 2, is_remote=True, trace_flags=trace.TraceFlags(0))
root = recording()
with trace.use_span(trace.NonRecordingSpan(context)):
    print(root, installed(), recording())
"""


def test_a_disabled_sdk_is_not_looked_for() -> None:
    assert _run(DISABLED, OTEL_SDK_DISABLED="true") == "False"


def test_under_a_span_not_sampled_nothing_is_recorded() -> None:
    assert _run(UNSAMPLED) == "True True False"


REMOTE_SAMPLED = """
from kjournal.spans import recording
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
sampled = trace.SpanContext(1, 2, is_remote=True, trace_flags=trace.TraceFlags(1))
local = trace.SpanContext(1, 3, is_remote=False, trace_flags=trace.TraceFlags(1))
with trace.use_span(trace.NonRecordingSpan(sampled)):
    remote = recording()
with trace.use_span(trace.NonRecordingSpan(local)):
    print(remote, recording())
"""


def test_under_a_sampled_remote_parent_spans_are_made() -> None:
    """A question's trace context extracted from the writer's request body (the reader's
    `append outcome` span) is a remote parent: it records nothing here, but its flags say the
    trace is sampled, so the span under it is made. A local span that does not record is a
    decision not to sample: nothing under it."""
    assert _run(REMOTE_SAMPLED) == "True False"
