"""Payload columns that contradict payload_type are refused, as kafka-journal refuses them.

kafka-journal (`JournalStatements.SelectRecords.readPayload`, then `EventualRead`) takes
payload_txt when it is set, else payload_bin (null: empty bytes), and fails the read when that is
not what payload_type asks for: "Bytes expected, but got string" for binary, "String expected,
but got bytes" for text and json. A null payload_type is no payload at all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from kjournal.cassandra.statements import journal
from kjournal.errors import DataIntegrityError
from kjournal.errors import FormatError
from kjournal.model import BinaryPayload
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import Payload
from kjournal.model import TextPayload

KEY = Key("journal", "order-7")

# (payload_type, payload_txt, payload_bin) → the payload kafka-journal reads
ACCEPTED: list[tuple[str | None, str | None, bytes | None, Payload | None]] = [
    ("binary", None, b"\x00\x01", BinaryPayload(b"\x00\x01")),
    ("binary", None, None, BinaryPayload(b"")),
    ("text", "hello", None, TextPayload("hello")),
    ("text", "", None, TextPayload("")),
    ("text", "hello", b"ignored", TextPayload("hello")),
    ("json", '{"a":1}', None, JsonPayload({"a": 1})),
    ("json", '{"a":1}', b"ignored", JsonPayload({"a": 1})),
    (None, "ignored", b"ignored", None),
    (None, None, None, None),
]

# (payload_type, payload_txt, payload_bin, what the error says the row holds)
REFUSED: list[tuple[str, str | None, bytes | None, str]] = [
    ("binary", "text", None, "only payload_txt"),
    ("binary", "", None, "only payload_txt"),
    ("binary", "text", b"\x00", "payload_txt and payload_bin"),
    ("text", None, b"\x00", "only payload_bin"),
    ("text", None, None, "neither payload_txt nor payload_bin"),
    ("json", None, b"{}", "only payload_bin"),
    ("json", None, None, "neither payload_txt nor payload_bin"),
]


@pytest.mark.parametrize(("payload_type", "txt", "bin_", "expected"), ACCEPTED)
def test_consistent_columns_read_as_kafka_journal_reads_them(
    payload_type: str | None, txt: str | None, bin_: bytes | None, expected: Payload | None
):
    assert journal.payload_from_columns(payload_type, txt, bin_) == expected


@pytest.mark.parametrize(("payload_type", "txt", "bin_", "holds"), REFUSED)
def test_contradicting_columns_are_a_data_integrity_error(
    payload_type: str, txt: str | None, bin_: bytes | None, holds: str
):
    with pytest.raises(DataIntegrityError) as raised:
        journal.payload_from_columns(payload_type, txt, bin_)

    assert str(raised.value) == (
        f"data integrity violated: payload_type {payload_type!r} with {holds}"
    )


def row(
    seq_nr: int, payload_type: str | None, txt: str | None, bin_: bytes | None
) -> tuple[Any, ...]:
    """A journal row as the reader selects it (SELECT_COLUMNS), from Kafka partition 3."""
    return (seq_nr, 3, 40 + seq_nr, datetime(2026, 1, 1), None, None, None, None,
            payload_type, txt, bin_, None, None)  # fmt: skip


@pytest.mark.parametrize(("payload_type", "txt", "bin_", "holds"), REFUSED)
def test_the_error_names_the_row(
    payload_type: str, txt: str | None, bin_: bytes | None, holds: str
):
    decode = journal.EventRowDecoder(KEY)
    good = row(1, "binary", None, b"ok")

    with pytest.raises(DataIntegrityError) as raised:
        decode.page([good, row(2, payload_type, txt, bin_)])

    assert str(raised.value) == (
        "journal row of journal:order-7 seqNr 2 (partition 3, offset 42) cannot be decoded: "
        f"data integrity violated: payload_type {payload_type!r} with {holds}"
    )


def test_an_unknown_payload_type_stays_a_format_error():
    # kafka-journal reads an unknown type as binary; kjournal refuses to guess what it holds.
    with pytest.raises(FormatError, match="unknown payload_type 'xml'") as raised:
        journal.EventRowDecoder(KEY)(row(5, "xml", None, b"<a/>"))

    assert not isinstance(raised.value, DataIntegrityError)
    assert "journal:order-7 seqNr 5" in str(raised.value)
