"""`configure_logging`: one handler for everything, and uvicorn's access log only when asked."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from kjournal_service.logs import configure_logging


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    names = ("uvicorn", "uvicorn.error", "uvicorn.access", "cassandra")
    saved = {
        n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in names
    }
    yield
    root.handlers[:], root.level = saved_root
    for name, (handlers, propagate) in saved.items():
        logging.getLogger(name).handlers[:] = handlers
        logging.getLogger(name).propagate = propagate


def test_access_log_is_off_by_default_even_after_uvicorn_gave_it_a_handler() -> None:
    # What a uvicorn worker process looks like before the app factory configures logging.
    logging.getLogger("uvicorn.access").addHandler(logging.StreamHandler())
    configure_logging("INFO", "text")
    # uvicorn's HTTP protocol writes access lines only when this is true.
    assert not logging.getLogger("uvicorn.access").hasHandlers()
    assert logging.getLogger("uvicorn.error").hasHandlers()


def test_access_log_goes_through_the_root_handler_when_asked_for() -> None:
    configure_logging("INFO", "json", access_log=True)
    access = logging.getLogger("uvicorn.access")
    assert access.hasHandlers()
    assert not access.handlers


def test_client_library_lines_are_throttled_per_kind() -> None:
    from kjournal_service.log_limits import Throttle

    throttle = Throttle(interval_s=60)

    def record(name: str, msg: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, ("node-1",), None)

    lines = [record("aiokafka.conn", "Unable connect to node %s") for _ in range(1000)]
    passed = [r for r in lines if throttle.filter(r)]
    assert len(passed) == 1
    assert throttle.filter(record("aiokafka.conn", "another kind %s"))
    assert all(throttle.filter(record("kjournal.read", "ours %s")) for _ in range(3))

    throttle.interval_s = 0  # the interval is over: the next line says what was dropped
    later = record("aiokafka.conn", "Unable connect to node %s")
    assert throttle.filter(later)
    assert "999 more like it" in later.getMessage()
