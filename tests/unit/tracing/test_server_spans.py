"""The HTTP server span: named by route, the caller's context continued (a malformed one ignored),
status and bytes recorded when the answer ends, 5xx an error, the span current inside."""

from __future__ import annotations

from typing import Any

import pytest
from kjournal_service.server_spans import ServerSpans
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode

from tests.unit.tracing.conftest import Spans

pytestmark = pytest.mark.anyio

CALLER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class Route:
    path = "/v1/journals/{topic}/{id}/events"


def _app(status: int, chunks: list[bytes], seen: list[Any]) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["route"] = Route
        seen.append(trace.get_current_span().get_span_context())
        await send({"type": "http.response.start", "status": status, "headers": []})
        for index, chunk in enumerate(chunks):
            more = index < len(chunks) - 1
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

    return app


async def _serve(
    app: Any, headers: list[tuple[bytes, bytes]], path: str = "/v1/journals/journal/a b/events"
) -> None:
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "http_version": "1.1",
        "path": path,
        "raw_path": b"/v1/journals/journal/a%20b/events?from=3",
        "query_string": b"from=3",
        "headers": headers,
        "server": ("127.0.0.1", 8082),
        "client": ("127.0.0.1", 50000),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        return None

    await ServerSpans(app, trace.get_tracer("test"))(scope, receive, send)


async def test_a_request_continues_the_callers_trace(spans: Spans) -> None:
    seen: list[Any] = []
    await _serve(_app(200, [b"one\n", b"two\n"], seen), [(b"traceparent", CALLER.encode())])
    span = spans.named("GET /v1/journals/{topic}/{id}/events")
    assert span.kind is SpanKind.SERVER
    assert span.parent is not None
    assert (span.parent.trace_id, span.parent.span_id) == (
        0x0AF7651916CD43DD8448EB211C80319C,
        0xB7AD6B7169203331,
    )
    assert seen == [span.get_span_context()]  # current while the app runs
    assert dict(span.attributes or {}) == {
        "http.request.method": "GET",
        "url.scheme": "http",
        "network.protocol.version": "1.1",
        "server.address": "127.0.0.1",
        "server.port": 8082,
        "client.address": "127.0.0.1",
        "url.path": "/v1/journals/journal/a%20b/events",
        "url.query": "from=3",
        "http.route": "/v1/journals/{topic}/{id}/events",
        "http.response.status_code": 200,
        "http.response.body.size": 8,
    }
    assert span.status.status_code is StatusCode.UNSET


async def test_a_malformed_traceparent_starts_a_new_trace(spans: Spans) -> None:
    await _serve(_app(200, [b""], []), [(b"traceparent", b"00-garbage-01")])
    span = spans.named("GET /v1/journals/{topic}/{id}/events")
    assert span.parent is None
    context = span.get_span_context()
    assert context is not None
    assert context.is_valid


async def test_a_server_error_is_an_error_span(spans: Spans) -> None:
    await _serve(_app(503, [b"{}"], []), [])
    span = spans.named("GET /v1/journals/{topic}/{id}/events")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "503"


async def test_probes_and_scrapes_are_not_traced(spans: Spans) -> None:
    for path in ("/healthz", "/readyz", "/metrics"):
        await _serve(_app(200, [b"ok"], []), [], path)
    assert spans.finished() == []


async def test_a_caller_not_sampled_gets_no_span_and_its_decision_is_current(spans: Spans) -> None:
    seen: list[Any] = []
    unsampled = CALLER[:-2] + "00"
    await _serve(_app(201, [b"{}"], seen), [(b"traceparent", unsampled.encode())])
    assert spans.finished() == []
    (context,) = seen
    assert f"{context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert not context.trace_flags.sampled
