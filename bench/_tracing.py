"""Tracing on and off in one bench run: the settings of each mode, and where spans go.

`off` is `OTEL_SDK_DISABLED=true`; `on` samples every trace (parentbased_always_on) and exports
to the local OpenTelemetry Collector of kjournal-dev (`scripts/dev up`), or to
`OTEL_EXPORTER_OTLP_ENDPOINT` when that is set.
"""

from __future__ import annotations

import os

from kjournal_dev.config import DevConfig

MODES = ("off", "on")


def otlp_endpoint() -> str:
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or (
        f"http://127.0.0.1:{DevConfig.from_env().otlp_http_port}"
    )


def tracing_env(mode: str) -> dict[str, str]:
    """The OTEL_* variables of a service process in `mode`."""
    if mode == "off":
        return {"OTEL_SDK_DISABLED": "true"}
    if mode == "on":
        return {
            "OTEL_SDK_DISABLED": "false",
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint(),
        }
    raise SystemExit(f"unknown tracing mode {mode!r}: {', '.join(MODES)}")


def modes(argument: str) -> list[str]:
    chosen = [mode.strip() for mode in argument.split(",") if mode.strip()]
    for mode in chosen:
        tracing_env(mode)
    return chosen
