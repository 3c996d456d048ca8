"""`run_service(...)`: what `python -m kjournal_<service>` does.

Settings from the environment (invalid ones: a message on stderr and exit status 2), the
service's `preflight` (credentials Kafka or Cassandra refuse: one line on stderr, exit status 3),
JSON logs, tracing (the standard OTEL_* variables), then uvicorn. SIGTERM/SIGINT: uvicorn stops
accepting, lets in-flight requests finish (at most `KJOURNAL_HTTP__GRACEFUL_SHUTDOWN_S`), then the
service's lifespan closes its clients.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from collections.abc import Coroutine
from typing import TypeVar

import uvicorn
from fastapi import FastAPI
from kjournal.errors import CredentialsRefused
from kjournal.telemetry import configure_tracing
from pydantic import ValidationError

from kjournal_service.http_protocol import LimitedHttpToolsProtocol
from kjournal_service.logs import configure_logging
from kjournal_service.settings import invalid_settings
from kjournal_service.state import ServiceSettingsLike

__all__ = ["run_service"]

S = TypeVar("S", bound=ServiceSettingsLike)

EXIT_INVALID_SETTINGS = 2
EXIT_CREDENTIALS_REFUSED = 3


def run_service(
    name: str,
    settings_type: Callable[[], S],
    create_app: Callable[[S], FastAPI],
    factory: str,
    preflight: Callable[[S], Coroutine[None, None, None]] | None = None,
) -> int:
    """Serve `create_app(settings)` until stopped; the exit status. `name` is also the default
    service.name of its spans (tracing: kjournal.telemetry).

    `factory` (`"package.module:function"`) builds the app in each worker process when
    `KJOURNAL_HTTP__WORKERS` > 1, since each opens its own clients (see `app.environment_app`).
    `preflight` checks what waiting cannot mend (CredentialsRefused) before serving.
    """
    try:
        settings = settings_type()
    except ValidationError as exc:
        sys.stderr.write(f"{name}: invalid settings:\n{invalid_settings(exc)}\n")
        return EXIT_INVALID_SETTINGS
    if preflight is not None:
        try:
            asyncio.run(preflight(settings))
        except CredentialsRefused as exc:
            sys.stderr.write(f"{name}: cannot start: {exc}\n")
            return EXIT_CREDENTIALS_REFUSED
    http = settings.http
    configure_logging(http.log_level, http.log_format, access_log=http.access_log)
    if http.workers == 1:  # worker processes set it up themselves (environment_app)
        setup = configure_tracing(name)
        if setup is not None:
            logging.getLogger(name).info("tracing: %s", setup.exporter)
    app: FastAPI | str = create_app(settings) if http.workers == 1 else factory
    uvicorn.run(
        app,
        factory=http.workers > 1,
        workers=http.workers,
        host=http.host,
        port=http.port,
        log_config=None,
        access_log=http.access_log,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=int(http.graceful_shutdown_s),
        loop="uvloop",
        http=LimitedHttpToolsProtocol,  # httptools, with limits on heads and slow clients
    )
    return 0
