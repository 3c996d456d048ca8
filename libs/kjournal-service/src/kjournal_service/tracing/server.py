"""`ServerSpans`: ASGI middleware giving every HTTP request a SERVER span (HTTP semantic
conventions), current while the request is served, continuing the caller's trace.

Written by hand rather than taken from opentelemetry-instrumentation-asgi, which also makes a
span per message sent and received and costs more than the writer's append budget allows. The
caller's context is read with the configured propagator (W3C `traceparent` by default); a
malformed one starts a new trace, as the propagator decides, never an error. A streamed answer's
span ends when its last chunk is sent, with the bytes sent as `http.response.body.size`.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry import context as context_api
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, StatusCode

from kjournal_service.asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ServerSpans"]


class ServerSpans:
    def __init__(self, app: ASGIApp, /, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer
        self.propagator = propagate.get_global_textmap()
        self.fields = frozenset(name.encode("latin-1") for name in self.propagator.fields)

    def _parent(self, headers: Iterable[tuple[bytes, bytes]]) -> context_api.Context | None:
        carrier = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in headers
            if name in self.fields
        }
        return self.propagator.extract(carrier) if carrier else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method") or "_OTHER"
        raw = scope.get("raw_path") or scope.get("path", "").encode()
        path, _, query = raw.partition(b"?")
        attributes: dict[str, str | int] = {
            "http.request.method": method,
            "url.scheme": scope.get("scheme") or "http",
            "url.path": path.decode("latin-1"),
            "network.protocol.version": scope.get("http_version") or "1.1",
        }
        query = query or scope.get("query_string")
        if query:
            attributes["url.query"] = query.decode("latin-1")
        server = scope.get("server")
        if server:
            attributes["server.address"], attributes["server.port"] = server
        client = scope.get("client")
        if client:
            attributes["client.address"] = client[0]
        parent = self._parent(scope.get("headers") or ())
        span = self.tracer.start_span(
            method, context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        token = context_api.attach(trace.set_span_in_context(span, parent))
        status = 0
        sent = 0

        async def send_traced(message: Message) -> None:
            nonlocal status, sent
            kind = message["type"]
            if kind == "http.response.body":
                sent += len(message.get("body", b""))
            elif kind == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_traced)
        except Exception as exc:
            span.record_exception(exc, escaped=True)
            status = status or 500
            raise
        finally:
            route = getattr(scope.get("route"), "path", None)
            if route:
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
            if status:
                span.set_attribute("http.response.status_code", status)
                span.set_attribute("http.response.body.size", sent)
                if status >= 500:
                    span.set_attribute("error.type", str(status))
                    span.set_status(StatusCode.ERROR)
            context_api.detach(token)
            span.end()
