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
