"""The local platform's tracing parts that need no process: collector settings and configuration,
the services' OTEL_* variables, and the waterfall of a trace read from collector output."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from kjournal_dev.artifacts.collector import MANIFEST
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.collector import collector_config
from kjournal_dev.platform.services import tracing_env
from kjournal_dev.traces.waterfall import latest_traces
from kjournal_dev.traces.waterfall import read_spans
from kjournal_dev.traces.waterfall import render_trace

TRACE = "0af7651916cd43dd8448eb211c80319c"
OTHER = "1bf7651916cd43dd8448eb211c80319d"


def test_the_collector_ports_default_to_the_standard_ones_and_are_settings(tmp_path: Path):
    default = DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path)})
    assert (default.otlp_grpc_port, default.otlp_http_port) == (4317, 4318)
    assert default.otlp_endpoint == "http://127.0.0.1:4318"
    moved = DevConfig.from_env(
        {"KJOURNAL_DEV_OTLP_GRPC_PORT": "24317", "KJOURNAL_DEV_OTLP_HTTP_PORT": "24318"}
    )
    rendered = yaml.safe_load(collector_config(moved, tmp_path))
    protocols = rendered["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"] == "127.0.0.1:24317"
    assert protocols["http"]["endpoint"] == "127.0.0.1:24318"
    assert rendered["exporters"]["file"]["path"] == str(tmp_path / "collector" / "spans.jsonl")
    assert rendered["service"]["pipelines"]["traces"]["exporters"] == ["file"]
    assert rendered["service"]["telemetry"]["metrics"]["level"] == "none"  # no :8888 to clash


def test_the_build_has_exactly_the_components_up_needs():
    manifest = yaml.safe_load(MANIFEST)
    modules = [entry["gomod"].split()[0].rsplit("/", 1)[-1] for group in
               ("receivers", "processors", "exporters") for entry in manifest[group]]  # fmt: skip
    assert modules == ["otlpreceiver", "batchprocessor", "fileexporter"]


def test_services_trace_to_the_local_collector_or_not_at_all(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    config = DevConfig.from_env({"KJOURNAL_DEV_OTLP_HTTP_PORT": "24318"})
    assert tracing_env(config)["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:24318"
    assert tracing_env(config)["OTEL_TRACES_SAMPLER"] == "parentbased_always_on"
    without = DevConfig.from_env({"KJOURNAL_DEV_COLLECTOR": "false"})
    assert tracing_env(without) == {"OTEL_SDK_DISABLED": "true"}
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector.example:4318")
    assert tracing_env(without) == {}  # the services then export where the variable says


def _span(trace: str, span: str, parent: str, name: str, start_ms: int, end_ms: int, **extra):
    attributes = [
        {"key": key, "value": {"intValue": str(value)} if isinstance(value, int)
         else {"stringValue": value}}
        for key, value in extra.pop("attributes", {}).items()
    ]  # fmt: skip
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "kind": extra.pop("kind", 1),
        "startTimeUnixNano": str(1_000_000_000_000 + start_ms * 1_000_000),
        "endTimeUnixNano": str(1_000_000_000_000 + end_ms * 1_000_000),
        "attributes": attributes,
        **extra,
    }


def _batch(service: str, *spans: dict[str, object]) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]})


def test_a_trace_prints_as_a_tree_with_the_spans_that_link_to_it(tmp_path: Path):
    lines = [
        _batch(
            "kjournal-writer",
            _span(
                TRACE,
                "a" * 16,
                "",
                "POST /v1/journals/{topic}/{id}/events",
                0,
                10,
                kind=2,
                attributes={"http.response.status_code": 201},
            ),
            _span(
                TRACE,
                "b" * 16,
                "a" * 16,
                "send journal",
                2,
                8,
                kind=4,
                attributes={
                    "messaging.destination.partition.id": "3",
                    "messaging.kafka.offset": 17,
                },
            ),
        ),
        "{ a line the collector was still writing",
        _batch(
            "kjournal-replicator",
            _span(
                OTHER,
                "c" * 16,
                "",
                "process journal",
                500,
                540,
                kind=5,
                links=[{"traceId": TRACE, "spanId": "b" * 16}],
                events=[
                    {
                        "timeUnixNano": str(1_000_000_000_000 + 510 * 1_000_000),
                        "name": "quarantined",
                        "attributes": [{"key": "kjournal.reason", "value": {"stringValue": "bad"}}],
                    }
                ],
            ),
            _span(OTHER, "d" * 16, "c" * 16, "BATCH journal", 520, 530, kind=3),
        ),
    ]
    (tmp_path / "spans.jsonl").write_text("\n".join(lines) + "\n")
    rendered = render_trace(TRACE.upper(), read_spans(tmp_path, mentioning=TRACE))
    text = "\n".join(rendered)
    assert rendered[0].startswith(f"trace {TRACE}: 2 spans, 1 linked from other traces")
    assert "writer     POST /v1/journals/{topic}/{id}/events [server]  status=201" in text
    assert "writer       send journal [producer]  partition=3 offset=17" in text
    assert "linked: replicator applied records of this trace" in text
    assert "replicator process journal [consumer]" in text
    assert "replicator   BATCH journal [client]" in text
    assert "• quarantined kjournal.reason=bad" in text
    assert "540.0 ms" in rendered[0]  # the whole span, linked spans included
    assert render_trace("f" * 32, read_spans(tmp_path)) == []
    assert [root.trace_id for root in latest_traces(read_spans(tmp_path))] == [TRACE, OTHER]
