"""`configure_tracing` follows the standard variables. Each case runs in a fresh interpreter:
a process installs its tracer provider once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json
from kjournal.spans import recording
from kjournal.telemetry import configure_tracing
setup = configure_tracing("kjournal-writer")
resource = {} if setup is None else dict(setup.provider.resource.attributes)
print(json.dumps({
    "setup": None if setup is None else setup.exporter,
    "recording": recording(),
    "service": resource.get("service.name"),
    "version": resource.get("service.version"),
    "team": resource.get("team"),
    "sampler": None if setup is None else setup.provider.sampler.get_description(),
}))
"""


def _probe(**variables: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(variables)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


@pytest.mark.parametrize(
    "variables", [{"OTEL_SDK_DISABLED": "true"}, {"OTEL_TRACES_EXPORTER": "none"}]
)
def test_disabled_means_no_provider_and_no_span_code(variables: dict[str, str]) -> None:
    probed = _probe(**variables)
    assert probed["setup"] is None
    assert probed["recording"] is False


def test_the_default_is_otlp_over_http_protobuf_to_the_configured_endpoint() -> None:
    probed = _probe(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4999")
    assert probed["setup"] == "otlp http/protobuf to http://127.0.0.1:4999/v1/traces"
    assert probed["recording"] is True
    assert probed["service"] == "kjournal-writer"
    assert probed["version"]


def test_the_variables_name_the_service_and_add_attributes() -> None:
    probed = _probe(OTEL_SERVICE_NAME="orders-writer", OTEL_RESOURCE_ATTRIBUTES="team=payments")
    assert probed["service"] == "orders-writer"
    assert probed["team"] == "payments"


def test_grpc_without_its_package_is_one_error_line_and_no_tracing() -> None:
    probed = _probe(OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    assert probed["setup"] is None
    assert "opentelemetry-exporter-otlp-proto-grpc" in str(probed["stderr"])


def test_console_exporter() -> None:
    assert _probe(OTEL_TRACES_EXPORTER="console")["setup"] == "console"


def test_the_sampler_is_the_variables_with_linked_sampling_around_it() -> None:
    assert (
        _probe()["sampler"]
        == "LinkedSampling{ParentBased{root:AlwaysOnSampler,remoteParentSampled:AlwaysOnSampler,remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}}"
    )
    ratio = _probe(OTEL_TRACES_SAMPLER="parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG="0.05")
    assert str(ratio["sampler"]).startswith(
        "LinkedSampling{ParentBased{root:TraceIdRatioBased{0.05}"
    )
