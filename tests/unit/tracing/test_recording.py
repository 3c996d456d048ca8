"""`recording()` without a tracer provider is a test of the API's global, not a call into it,
and still sees a provider installed later, or named by the environment. Each case runs in a
fresh interpreter: a process installs its tracer provider once."""

from __future__ import annotations

import os
import subprocess
import sys

LATE = """
from kjournal.tracing import recording
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
before = [recording() for _ in range(3)]
trace.set_tracer_provider(TracerProvider())
print(before, recording())
"""

NAMED = """
from kjournal.tracing import recording
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
