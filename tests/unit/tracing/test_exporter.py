"""The exporter posts our encoding of the spans where the standard variables say, as the SDK's
OTLP/HTTP exporter would (an HTTP server on loopback stands in for the collector here; the
integration tests send to the real one)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kjournal_service.tracing.exporter import OtlpHttpSpanExporter, urllib3_transport
from kjournal_service.tracing.lean import LeanTracerProvider
from opentelemetry.exporter.http.transport._urllib3 import Urllib3HTTPTransport
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

RECEIVED: list[tuple[str, str, bytes]] = []


class Collector(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        RECEIVED.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, bytes]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    RECEIVED.clear()
    yield RECEIVED
    server.shutdown()
    server.server_close()


def test_spans_reach_the_endpoint_as_otlp_protobuf(
    collector: list[tuple[str, str, bytes]],
) -> None:
    exporter = OtlpHttpSpanExporter()
    provider = LeanTracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("kjournal").start_as_current_span("send journal"):
        pass
    ((path, content_type, body),) = collector
    assert path == "/v1/traces"
    assert content_type == "application/x-protobuf"
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    (resource_spans,) = request.resource_spans
    (scope_spans,) = resource_spans.scope_spans
    assert [span.name for span in scope_spans.spans] == ["send journal"]
    exporter.shutdown()  # type: ignore[no-untyped-call]
    assert exporter.export([]) is SpanExportResult.FAILURE  # after shutdown


def test_the_transport_is_urllib3_with_the_variables_tls_settings() -> None:
    transport = urllib3_transport(
        {
            "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem",
            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": "/client.pem",
            "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/client.key",
        }
    )
    options = transport._pool.connection_pool_kw
    assert (options["ca_certs"], options["cert_file"], options["key_file"]) == (
        "/ca.pem",
        "/client.pem",
        "/client.key",
    )
    assert isinstance(OtlpHttpSpanExporter()._client._transport, Urllib3HTTPTransport)
