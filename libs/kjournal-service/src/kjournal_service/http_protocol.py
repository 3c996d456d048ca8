"""`LimitedHttpToolsProtocol`: uvicorn's httptools protocol with limits on what a client may send
before the application sees its request, each answered with a problem and the connection closed:

* a request head (request line and header fields) larger than `max_head_bytes`: 414 while the
  request target is still arriving, else 431; more than `max_header_count` fields: 431;
* a head not complete within `header_timeout_s` of the connection opening or the request
  beginning (slow-loris), or a body not complete within `body_timeout_s` of its head: 408.

After such an answer the server stops reading, half-closes the connection and discards what the
client still sends for a moment (a close with unread data would reset the connection, and the
client might lose the answer). uvicorn itself buffers a head of any size and waits for it, and
for a body, forever. The checks
cost the common request, which arrives whole in one read, no timer at all: a deadline is armed
only when a read ends with a request still incomplete.

The limits are class attributes set once per process (`configure`, called by `service_app`):
uvicorn builds the protocol itself, in each worker process.

What one turn of the event loop writes to a connection leaves in one send (`CoalescedWrites`):
uvicorn writes a response's head and its body apart, and with TCP_NODELAY each write was a system
call and a TCP segment of its own, the head's and the body's (about a tenth of the writer's CPU
per append went to them; docs/performance.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from typing import ClassVar

from kjournal.api.problems import HEADERS_TOO_LARGE
from kjournal.api.problems import REQUEST_TIMEOUT
from kjournal.api.problems import URI_TOO_LONG
from kjournal.api.problems import ProblemSpec
from kjournal.api.problems import spec_problem
from uvicorn.protocols.http.httptools_impl import STATUS_LINE
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kjournal_service.problems import problem_response

__all__ = ["CoalescedWrites", "LimitedHttpToolsProtocol", "RequestLimits"]

_IDLE, _HEAD, _BODY = "idle", "head", "body"
_LINGER_S = 2.0  # how long a refused client may take to read the answer and close


@dataclass(frozen=True, slots=True)
class RequestLimits:
    max_head_bytes: int = 32 * 1024
    max_header_count: int = 100
    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0


class CoalescedWrites(asyncio.Transport):
    """A connection's transport whose writes within one turn of the event loop go out together,
    as one write of the transport under it, once the turn's callbacks have run. Closing, a
    half-close and the buffer's size count the writes still held; aborting drops them."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._held is None:
            self._held = [bytes(data)]
            self._loop.call_soon(self._flush)
        else:
            self._held.append(bytes(data))

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held:
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def get_write_buffer_size(self) -> int:
        held = sum(len(data) for data in self._held) if self._held else 0
        return self._transport.get_write_buffer_size() + held


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    limits: ClassVar[RequestLimits] = RequestLimits()

    @classmethod
    def configure(cls, limits: RequestLimits) -> None:
        cls.limits = limits

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase = _IDLE
        self._deadline = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._head_bytes = 0
        self._header_count = 0
        self._answered = False  # a refusal was sent: the rest of the connection is discarded

    # -- connection ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescedWrites(transport, self.loop))
        # A connection that sends nothing holds a socket like a slow head does.
        self._begin(_HEAD, self.limits.header_timeout_s)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._answered:
            return
        super().data_received(data)
        if self._phase is not _IDLE and not self.transport.is_closing():
            self._arm()

    # -- parser callbacks ------------------------------------------------------------------

    # Once a refusal is sent, the rest of what the parser found in the same read is ignored.

    def on_message_begin(self) -> None:
        if self._answered:
            return
        super().on_message_begin()
        self._head_bytes = 0
        self._header_count = 0
        if self._phase is not _HEAD:  # a new connection's first request keeps its deadline
            self._begin(_HEAD, self.limits.header_timeout_s)

    def on_url(self, url: bytes) -> None:
        if self._answered:
            return
        self._head_bytes += len(url)
        if self._head_bytes > self.limits.max_head_bytes:
            detail = f"the request target exceeds {self.limits.max_head_bytes} bytes"
            self._answer(URI_TOO_LONG, detail)
            return
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._answered:
            return
        self._header_count += 1
        self._head_bytes += len(name) + len(value) + 4
        if self._header_count > self.limits.max_header_count:
            self._answer(
                HEADERS_TOO_LARGE, f"more than {self.limits.max_header_count} header fields"
            )
            return
        if self._head_bytes > self.limits.max_head_bytes:
            limit = self.limits.max_head_bytes
            self._answer(
                HEADERS_TOO_LARGE, f"the request line and header fields exceed {limit} bytes"
            )
            return
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._answered:
            return
        self._begin(_BODY, self.limits.body_timeout_s)
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._answered:
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self._answered:
            return
        self._phase = _IDLE
        self._cancel()
        super().on_message_complete()

    # -- deadlines -------------------------------------------------------------------------

    def _begin(self, phase: str, timeout_s: float) -> None:
        self._phase = phase
        self._deadline = self.loop.time() + timeout_s

    def _arm(self) -> None:
        if self._timer is not None and self._timer_at == self._deadline:
            return
        self._cancel()
        self._timer_at = self._deadline
        self._timer = self.loop.call_at(self._deadline, self._expired)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self._phase is _IDLE or self.transport.is_closing():
            return
        if self.loop.time() < self._deadline:  # the phase moved on: a later deadline
            self._arm()
            return
        if self._phase is _HEAD:
            detail = f"the request head did not arrive within {self.limits.header_timeout_s:g} s"
            self._answer(REQUEST_TIMEOUT, detail)
            return
        cycle = self.cycle
        if cycle is None or cycle.response_started:
            self.transport.close()
            return
        # The application may be waiting for the body: it sees a disconnect, and its answer
        # is dropped (the cycle is marked disconnected before anything else can be sent).
        cycle.disconnected = True
        cycle.message_event.set()
        detail = f"the request body did not arrive within {self.limits.body_timeout_s:g} s"
        self._answer(REQUEST_TIMEOUT, detail)

    # -- answers ---------------------------------------------------------------------------

    def _answer(self, spec: ProblemSpec, detail: str) -> None:
        self._phase = _IDLE
        self._answered = True
        self._cancel()
        self.logger.info("refused a request from %s: %s", _client(self.client), detail)
        rendered = problem_response(spec_problem(spec, detail))
        head = [STATUS_LINE[rendered.status]]
        for name, value in rendered.headers:
            head.append(f"{name}: {value}\r\n".encode("latin-1"))
        head.append(f"content-length: {len(rendered.body)}\r\nconnection: close\r\n\r\n".encode())
        self.transport.write(b"".join(head) + rendered.body)
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(_LINGER_S, self.transport.close)
        else:
            self.transport.close()


def _client(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "a client"
