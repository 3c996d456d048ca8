"""`python -m kjournal_replicator`: settings from the environment, JSON log lines on stdout,
tracing from the standard `OTEL_*` variables (kjournal.telemetry)."""

from __future__ import annotations

import logging
import sys

from kjournal.telemetry import configure_tracing
from kjournal_service.logs import configure_logging
from kjournal_service.settings import invalid_settings
from pydantic import ValidationError

from kjournal_replicator.job import EXIT_START_FAILED
from kjournal_replicator.job import Replicator
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.slice_span import SERVICE


def main() -> int:
    configure_logging("INFO", "json")
    # py4j logs every gateway call at INFO.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    try:
        settings = ReplicatorSettings()
    except ValidationError as exc:
        logging.getLogger("kjournal_replicator").error(
            "invalid settings:\n%s", invalid_settings(exc)
        )
        return EXIT_START_FAILED
    setup = configure_tracing(SERVICE)
    if setup is not None:
        logging.getLogger("kjournal_replicator").info("tracing: %s", setup.exporter)
    replicator = Replicator(settings)
    replicator.install_signal_handlers()
    return replicator.run()


if __name__ == "__main__":
    sys.exit(main())
