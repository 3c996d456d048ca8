"""`ServerSpans`: ASGI middleware giving every HTTP request a SERVER span (HTTP semantic
conventions), current while the request is served, continuing the caller's trace.

Written by hand rather than taken from opentelemetry-instrumentation-asgi, which also makes a
span per message sent and received and costs more than the writer's append budget allows. The
caller's context is read with the configured propagator (W3C `traceparent` by default); a
malformed one starts a new trace, as the propagator decides, never an error. A request the
sampler drops still has its span's context current (what it calls carries the decision on), but
nothing more is done for it. A streamed answer's span ends when its last chunk is sent, with the
bytes sent as `http.response.body.size`. Probes and scrapes (`/healthz`, `/readyz`, `/metrics`) are not traced: every few seconds each, they
would bury the traces that matter.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry import context as context_api
from opentelemetry import propagate
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode

from kjournal_service.asgi import ASGIApp
from kjournal_service.asgi import Message
from kjournal_service.asgi import Receive
from kjournal_service.asgi import Scope
from kjournal_service.asgi import Send

__all__ = ["UNTRACED_PATHS", "ServerSpans"]

UNTRACED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# A request without a caller's context starts a trace (given explicitly, the SDK need not look
# up the current context three times to find it empty).
_ROOT = context_api.Context()


class ServerSpans:
    def __init__(self, app: ASGIApp, /, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer
        self.propagator = propagate.get_global_textmap()
        self.fields = frozenset(name.encode("latin-1") for name in self.propagator.fields)
        self._constants: dict[tuple[object, ...], dict[str, str | int]] = {}

    def _constant(self, method: str, scope: Scope) -> dict[str, str | int]:
        """The attributes that repeat from request to request on a connection (computed once per
        method, scheme, protocol, server and client address)."""
        server = scope.get("server")
        client = scope.get("client")
        key = (method, scope.get("scheme"), scope.get("http_version"), server, client and client[0])
        known = self._constants.get(key)
        if known is None:
            known = {
                "http.request.method": method,
                "url.scheme": scope.get("scheme") or "http",
                "network.protocol.version": scope.get("http_version") or "1.1",
            }
            if server:
                known["server.address"], known["server.port"] = server[0], server[1]
            if client:
                known["client.address"] = client[0]
            if len(self._constants) > 1024:
                self._constants.clear()
            self._constants[key] = known
        return known

    def _parent(self, headers: Iterable[tuple[bytes, bytes]]) -> context_api.Context:
        if self.fields.isdisjoint(dict(headers)):  # the common case, with no loop in Python
            return _ROOT
        carrier = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in headers
            if name in self.fields
        }
        return self.propagator.extract(carrier, context=_ROOT) if carrier else _ROOT

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNTRACED_PATHS:
            await self.app(scope, receive, send)
            return
        method = scope.get("method") or "_OTHER"
        raw = scope.get("raw_path") or scope.get("path", "").encode()
        path, _, query = raw.partition(b"?")
        attributes = self._constant(method, scope).copy()
        attributes["url.path"] = path.decode("latin-1")
        query = query or scope.get("query_string")
        if query:
            attributes["url.query"] = query.decode("latin-1")
        parent = self._parent(scope.get("headers") or ())
        span = self.tracer.start_span(method, parent, SpanKind.SERVER, attributes)
        token = context_api.attach(trace.set_span_in_context(span, parent))
        if not span.is_recording():  # not sampled: its context is current, nothing to record
            try:
                await self.app(scope, receive, send)
            finally:
                context_api.detach(token)
            return
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
            if status:
                ended: dict[str, str | int] = {
                    "http.response.status_code": status,
                    "http.response.body.size": sent,
                }
                if route:
                    ended["http.route"] = route
                span.set_attributes(ended)
                if status >= 500:
                    span.set_attribute("error.type", str(status))
                    span.set_status(StatusCode.ERROR)
            context_api.detach(token)
            span.end()
