"""The driver's tiny HTTP endpoint: `/healthz` (liveness) and `/metrics` (Prometheus text).

Liveness means the streaming query is running (or still starting): a failed or stopped query
answers 503, and so does a driver stuck in one micro-batch longer than `stuck_after_s`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

__all__ = ["Health", "HttpEndpoint"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Health:
    ok: bool
    detail: dict[str, object]


class HttpEndpoint:
    """Serves on a daemon thread; `port` is the bound port (useful with port 0)."""

    def __init__(
        self,
        host: str,
        port: int,
        exposition: Callable[[], tuple[bytes, str]],
        health: Callable[[], Health],
    ) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the http.server API names it
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    body, content_type = exposition()
                    self._send(200, content_type, body)
                elif path == "/healthz":
                    state = health()
                    body = json.dumps({"ok": state.ok, **state.detail}).encode()
                    self._send(200 if state.ok else 503, "application/json", body)
                else:
                    self._send(404, "text/plain", b"not found\n")

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("http: " + format, *args)

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="kjournal-http", daemon=True
        )

    def start(self) -> HttpEndpoint:
        self._thread.start()
        log.info("serving /healthz and /metrics on port %d", self.port)
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
