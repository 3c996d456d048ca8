"""`ServerWarningThrottle`: one driver "Server warning" line per kind per interval."""

from __future__ import annotations

import logging

import pytest
from kjournal.cassandra.server_warnings import ServerWarningThrottle
from kjournal.cassandra.server_warnings import throttle_server_warnings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def server_warning(text: str) -> logging.LogRecord:
    # The shape the driver logs: log.warning("Server warning: %s", w)
    return logging.LogRecord(
        "cassandra.protocol", logging.WARNING, __file__, 1, "Server warning: %s", (text,), None
    )


BATCH = "Batch for [ks.journal] is of size {}KiB, exceeding specified threshold of 5.000KiB"


def test_one_line_per_kind_per_interval_with_the_count_held_back() -> None:
    clock = Clock()
    throttle = ServerWarningThrottle(interval_s=60, clock=clock)
    passed = [throttle.filter(server_warning(BATCH.format(10 + n))) for n in range(5)]
    assert passed == [True, False, False, False, False]

    clock.now += 61
    record = server_warning(BATCH.format(11.5))
    assert throttle.filter(record)
    assert record.getMessage() == (
        "Server warning: " + BATCH.format(11.5) + " (4 more like it since the last one logged)"
    )


def test_kinds_are_throttled_apart_and_other_lines_pass() -> None:
    throttle = ServerWarningThrottle(interval_s=60, clock=Clock())
    assert throttle.filter(server_warning(BATCH.format(10)))
    assert throttle.filter(server_warning("Read 5000 live rows and 100001 tombstone cells"))
    other = logging.LogRecord(
        "cassandra.protocol", logging.WARNING, __file__, 1, "Unknown protocol flags", None, None
    )
    assert throttle.filter(other)
    assert throttle.filter(other)


def test_installed_once_on_the_driver_logger(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("cassandra.protocol")
    saved = list(logger.filters)
    try:
        throttle_server_warnings()
        throttle_server_warnings()
        assert sum(isinstance(f, ServerWarningThrottle) for f in logger.filters) == 1
        with caplog.at_level(logging.WARNING, logger="cassandra.protocol"):
            for size in (10, 11, 12):
                logger.warning("Server warning: %s", BATCH.format(size))
        assert len(caplog.records) == 1
    finally:
        logger.filters[:] = saved
