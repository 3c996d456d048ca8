"""Framework-free ASGI middleware shared by the HTTP services.

* `RawPathRouting`: route on the raw (still percent-encoded) path, so an id holding `%2F` stays
  one path segment; handlers decode segments themselves (KeyRules).
* `BodyLimit`: 413 problem for bodies over the limit, before anything parses them: at once when
  Content-Length says so, else while buffering a chunked body.
* `RequestMetrics`: count and time requests per route template (never per path: ids are
  unbounded), and the number in flight.
* `KeepAliveAfterErrors`: an exception that arrives after its request was answered in full does
  not reach the server, which would close the kept-alive connection under the client.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import MutableMapping
from typing import Any

from kjournal.api.problems import request_too_large_problem
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import HTTP_REQUEST_SECONDS
from kjournal.metrics.catalogue import HTTP_REQUESTS
from kjournal.metrics.catalogue import HTTP_REQUESTS_IN_FLIGHT

from kjournal_service.problems import problem_response

__all__ = ["ASGIApp", "BodyLimit", "KeepAliveAfterErrors", "RawPathRouting", "RequestMetrics"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RawPathRouting:
    def __init__(self, app: ASGIApp, /) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw:
            # Some servers (and httpx's ASGI transport) leave the query string in raw_path.
            scope["path"] = bytes(raw).split(b"?", 1)[0].decode("latin-1")
        await self.app(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimit:
    def __init__(self, app: ASGIApp, /, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _content_length(scope)
        if length is not None:
            if length > self.max_bytes:
                await self._reject(scope, send, length)
                return
            # The server delivers at most Content-Length bytes: nothing more to watch.
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            body = bytes(message.get("body", b""))
            size += len(body)
            if size > self.max_bytes:
                await self._reject(scope, send, None)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _reject(self, scope: Scope, send: Send, size: int | None) -> None:
        problem = request_too_large_problem(size, self.max_bytes, scope.get("path"))
        rendered = problem_response(problem)
        headers = [(k.encode(), v.encode()) for k, v in rendered.headers]
        headers.append((b"content-length", str(len(rendered.body)).encode()))
        await send({"type": "http.response.start", "status": rendered.status, "headers": headers})
        await send({"type": "http.response.body", "body": rendered.body, "more_body": False})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that first returns `messages`, then defers to the server (for disconnects)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class RequestMetrics:
    """`kjournal_http_requests_total{method,route,status}`, `kjournal_http_request_seconds`."""

    def __init__(self, app: ASGIApp, /, metrics: Metrics, service: str) -> None:
        self.app = app
        self.metrics = metrics
        self.service = service
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        self.in_flight += 1
        self.metrics.set(HTTP_REQUESTS_IN_FLIGHT.name, self.in_flight, service=self.service)
        try:
            await self.app(scope, receive, send_status)
        finally:
            self.in_flight -= 1
            self.metrics.set(HTTP_REQUESTS_IN_FLIGHT.name, self.in_flight, service=self.service)
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = str(scope.get("method", ""))
            self.metrics.increment(
                HTTP_REQUESTS.name,
                1,
                service=self.service,
                method=method,
                route=route,
                status=str(status),
            )
            self.metrics.observe(
                HTTP_REQUEST_SECONDS.name,
                time.perf_counter() - started,
                service=self.service,
                method=method,
                route=route,
            )


class KeepAliveAfterErrors:
    """Starlette answers an unexpected exception with the 500 problem (our handler logs it with
    its trace id) and then raises it again "for the server to log". uvicorn then closes the
    connection, though the answer told the client it may keep it: the client's next request on it
    was reset. An exception after a complete answer is dropped here (it was logged); one that
    breaks an answer midway still reaches the server, which closes the connection, so the
    client sees a broken body, never a shortened one that looks whole."""

    def __init__(self, app: ASGIApp, /) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        complete = False

        async def send_tracked(message: Message) -> None:
            nonlocal complete
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                complete = True

        try:
            await self.app(scope, receive, send_tracked)
        except Exception:
            if not complete:
                raise
