"""Tracing on and off in one bench run: the settings of each mode, and where spans go.

`off` is `OTEL_SDK_DISABLED=true`; `on` samples every trace (parentbased_always_on); `default`
samples as the Helm chart does by default (`otlp.sampler` and `otlp.samplerArg` of
helm/kjournal/values.yaml, read from there). Spans go to the local OpenTelemetry Collector of
kjournal-dev (`scripts/dev up`), or to `OTEL_EXPORTER_OTLP_ENDPOINT` when that is set.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import yaml
from kjournal_dev.config import DevConfig

MODES = ("off", "default", "on")
_CHART_VALUES = Path(__file__).resolve().parents[1] / "helm" / "kjournal" / "values.yaml"


@cache
def chart_sampler() -> tuple[str, str]:
    """The chart's default OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG."""
    otlp = yaml.safe_load(_CHART_VALUES.read_text())["otlp"]
    return str(otlp["sampler"]), str(otlp["samplerArg"])


def otlp_endpoint() -> str:
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or (
        f"http://127.0.0.1:{DevConfig.from_env().otlp_http_port}"
    )


def tracing_env(mode: str) -> dict[str, str]:
    """The OTEL_* variables of a service process in `mode`; none for "" (no `--tracing` given:
    the process keeps whatever the environment says)."""
    if not mode:
        return {}
    if mode == "off":
        return {"OTEL_SDK_DISABLED": "true"}
    if mode == "on":
        return {
            "OTEL_SDK_DISABLED": "false",
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint(),
        }
    if mode == "default":
        sampler, ratio = chart_sampler()
        return {
            "OTEL_SDK_DISABLED": "false",
            "OTEL_TRACES_SAMPLER": sampler,
            "OTEL_TRACES_SAMPLER_ARG": ratio,
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint(),
        }
    raise SystemExit(f"unknown tracing mode {mode!r}: {', '.join(MODES)}")


def label(mode: str) -> str:
    """How a mode is named in a bench's output (the default's sampler spelled out)."""
    if mode == "default":
        sampler, ratio = chart_sampler()
        return f"default ({sampler} {ratio})"
    return mode


def modes(argument: str) -> list[str]:
    chosen = [mode.strip() for mode in argument.split(",") if mode.strip()]
    for mode in chosen:
        tracing_env(mode)
    return chosen
