"""`python -m kjournal_writer`: settings from the environment, JSON logs, uvicorn.

SIGTERM/SIGINT: uvicorn stops accepting, lets in-flight requests finish (at most
`KJOURNAL_HTTP__GRACEFUL_SHUTDOWN_S`), then the lifespan closes the producer.
"""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI
from kjournal.api.logs import configure_logging
from pydantic import ValidationError

from kjournal_writer.app import create_app
from kjournal_writer.settings import Settings

FACTORY = "kjournal_writer.app:app_from_environment"


def main() -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        sys.stderr.write(f"kjournal-writer: invalid settings:\n{exc}\n")
        return 2
    http = settings.http
    configure_logging(http.log_level, http.log_format)
    # Several workers: each process builds its own app (and Kafka clients) from the environment.
    app: FastAPI | str = create_app(settings) if http.workers == 1 else FACTORY
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
        http="httptools",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
