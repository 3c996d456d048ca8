"""Driver error translation, and the reader's fit to the port."""

from __future__ import annotations

import pytest
from cassandra import InvalidRequest
from cassandra import OperationTimedOut
from cassandra import ReadTimeout
from cassandra import Unauthorized
from cassandra import Unavailable
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.session import driver_errors
from kjournal.cassandra.session import translate_error
from kjournal.errors import CassandraUnavailable
from kjournal.errors import DeadlineExceeded
from kjournal.errors import SchemaError
from kjournal.ports import EventualReader


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ReadTimeout("slow replica"), DeadlineExceeded),
        (OperationTimedOut("client timeout"), DeadlineExceeded),
        (Unavailable("not enough replicas"), CassandraUnavailable),
        (NoHostAvailable("none", {}), CassandraUnavailable),
        (ConnectionException("reset"), CassandraUnavailable),
        (Unauthorized("no grant"), CassandraUnavailable),
        (InvalidRequest("unconfigured table journal"), SchemaError),
    ],
)
def test_driver_errors_become_kjournal_errors(error: Exception, expected: type[Exception]):
    translated = translate_error(error, "reading")

    assert isinstance(translated, expected)
    assert str(translated).startswith("reading")


def test_other_errors_are_not_translated():
    assert translate_error(ValueError("x"), "reading") is None
    with pytest.raises(ValueError, match="x"), driver_errors("reading"):
        raise ValueError("x")


def test_translated_errors_are_chained():
    cause = ReadTimeout("slow")
    with pytest.raises(DeadlineExceeded) as err, driver_errors("reading"):
        raise cause

    assert err.value.__cause__ is cause


def conforms(reader: CassandraEventualReader) -> EventualReader:
    return reader  # mypy checks CassandraEventualReader against the Protocol here


def test_the_reader_implements_the_port():
    assert conforms.__annotations__["return"] == "EventualReader"
