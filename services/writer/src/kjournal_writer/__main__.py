"""`python -m kjournal_writer`: settings from the environment, JSON logs, uvicorn.

SIGTERM/SIGINT: uvicorn stops accepting, lets in-flight requests finish (at most
`KJOURNAL_HTTP__GRACEFUL_SHUTDOWN_S`), then the lifespan closes the producer.
"""

from __future__ import annotations

import sys

from kjournal.kafka.credentials import check_kafka_credentials
from kjournal_service.runner import run_service

from kjournal_writer.app import create_app
from kjournal_writer.settings import Settings


async def _preflight(settings: Settings) -> None:
    await check_kafka_credentials(settings.kafka)


def main() -> int:
    return run_service(
        "kjournal-writer",
        Settings,
        create_app,
        "kjournal_writer.app:app_from_environment",
        _preflight,
    )


if __name__ == "__main__":
    sys.exit(main())
