"""`python -m kjournal_reader`: settings from the environment, JSON logs, uvicorn.

SIGTERM/SIGINT: uvicorn stops accepting, lets in-flight requests finish (at most
`KJOURNAL_HTTP__GRACEFUL_SHUTDOWN_S`), then the lifespan closes the Kafka and Cassandra clients.
"""

from __future__ import annotations

import asyncio
import sys

from kjournal.cassandra.credentials import check_cassandra_credentials
from kjournal.kafka.credentials import check_kafka_credentials
from kjournal_service.runner import run_service

from kjournal_reader.app import create_app
from kjournal_reader.settings import Settings


async def _preflight(settings: Settings) -> None:
    await check_kafka_credentials(settings.kafka)
    await asyncio.to_thread(check_cassandra_credentials, settings.cassandra)


def main() -> int:
    return run_service(
        "kjournal-reader",
        Settings,
        create_app,
        "kjournal_reader.app:app_from_environment",
        _preflight,
    )


if __name__ == "__main__":
    sys.exit(main())
