"""`python -m kjournal_replicator`: settings from the environment, JSON log lines on stdout."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from pydantic import ValidationError

from kjournal_replicator.job import EXIT_START_FAILED, Replicator
from kjournal_replicator.settings import ReplicatorSettings


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging() -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # py4j logs every gateway call at INFO.
    logging.getLogger("py4j").setLevel(logging.WARNING)


def main() -> int:
    configure_logging()
    try:
        settings = ReplicatorSettings()
    except ValidationError as exc:
        logging.getLogger("kjournal_replicator").error("invalid settings: %s", exc)
        return EXIT_START_FAILED
    replicator = Replicator(settings)
    replicator.install_signal_handlers()
    return replicator.run()


if __name__ == "__main__":
    sys.exit(main())
