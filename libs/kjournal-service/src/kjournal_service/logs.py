"""Log set-up for the services' entry points: JSON lines (or plain text) on stdout.

The library itself installs no handlers; only a service's `__main__` calls `configure_logging`.
uvicorn's loggers are routed through the same handler so a service writes one format. A JSON line
written while a span is current carries its `trace_id` and `span_id` (hex, as trace viewers show
them).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC
from datetime import datetime
from typing import Literal
from typing import TextIO

from opentelemetry.trace import get_current_span

from kjournal_service.log_limits import Throttle

__all__ = ["TEXT_FORMAT", "JsonFormatter", "configure_job_logging", "configure_logging"]

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""A plain text log line's format."""

# Attributes every LogRecord has; anything else was passed with `extra=` and is logged too.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "color_message",  # uvicorn's ANSI-coloured duplicate of the message
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = get_current_span().get_span_context()
        if context.is_valid:
            entry["trace_id"] = f"{context.trace_id:032x}"
            entry["span_id"] = f"{context.span_id:016x}"
        for name, value in vars(record).items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(
    level: str = "INFO", fmt: Literal["json", "text"] = "json", *, access_log: bool = False
) -> None:
    """Route the root logger and uvicorn's loggers to one stdout handler.

    uvicorn writes an access line only when `uvicorn.access` has a handler, and a worker process
    (`KJOURNAL_HTTP__WORKERS` > 1) sets up logging after uvicorn has: without `access_log` the
    logger is cut off here, or every request would cost a formatted log line.
    """
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").propagate = access_log
    # The driver logs every failed reconnection attempt at WARNING; once is enough for us.
    logging.getLogger("cassandra").setLevel(max(logging.ERROR, root.level))
    handler.addFilter(Throttle())


def configure_job_logging(stream: TextIO, *, quiet: Iterable[str], fmt: str = TEXT_FORMAT) -> None:
    """Plain text lines at INFO on `stream`, for the jobs (the schema migration, the check and
    expiry commands); the `quiet` loggers (drivers) only from WARNING."""
    logging.basicConfig(stream=stream, level=logging.INFO, format=fmt)
    for name in quiet:
        logging.getLogger(name).setLevel(logging.WARNING)
