"""The `journal.action` header: reading order, optional fields, forward compatibility, errors."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kjournal.errors import HeaderFormatError
from kjournal.errors import InvalidInput
from kjournal.model import AppendHeader
from kjournal.model import DeleteHeader
from kjournal.model import HeaderMetadata
from kjournal.model import MarkHeader
from kjournal.model import PayloadType
from kjournal.model import PurgeHeader
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.wire import decode_action_header
from kjournal.wire import encode_action_header


def _header(value: object) -> bytes:
    return json.dumps(value).encode()


APPEND = {"range": {"from": 1, "to": 2}, "payloadType": "json", "metadata": {}}


def test_append_fields_are_written_in_the_scala_order_and_absent_ones_omitted():
    header = AppendHeader(SeqRange(SeqNr(1), SeqNr(2)), PayloadType.BINARY, version="11.0.0")
    assert encode_action_header(header) == (
        b'{"append":{"range":{"from":1,"to":2},"version":"11.0.0",'
        b'"payloadType":"binary","metadata":{}}}'
    )


def test_a_text_payload_type_is_never_written_at_record_level():
    with pytest.raises(InvalidInput, match="binary or json"):
        encode_action_header(AppendHeader(SeqRange(SeqNr(1), SeqNr(1)), PayloadType.TEXT))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"new": {}}, None),
        ({}, None),
        ([1, 2], None),
        ("append", None),
        (None, None),
        (3, None),
        ({"append": 5}, None),
        ({"append": None, "purge": {}}, PurgeHeader()),
        ({"append": [], "mark": {"id": "m"}}, MarkHeader("m")),
        ({"purge": {}, "delete": {"to": 2}, "mark": {"id": "m"}}, MarkHeader("m")),
        ({"purge": {}, "delete": {"to": 2}}, DeleteHeader(SeqNr(2))),
        ({"purge": {"origin": None, "version": None, "extra": 1}}, PurgeHeader()),
    ],
)
def test_first_known_action_whose_value_is_an_object_wins_else_none(value, expected):
    assert decode_action_header(_header(value)) == expected


def test_append_is_tried_before_the_others_and_its_errors_are_not_masked():
    with pytest.raises(HeaderFormatError, match="invalid append"):
        decode_action_header(_header({"append": {}, "mark": {"id": "m"}}))


@pytest.mark.parametrize(
    "metadata", [None, "x", 1, [], {"data": None}, {"other": 1}], ids=lambda v: repr(v)
)
def test_append_metadata_missing_or_not_an_object_or_without_data_is_empty(metadata):
    body = {**APPEND, "metadata": metadata}
    header = decode_action_header(_header({"append": body}))
    assert isinstance(header, AppendHeader)
    assert header.metadata == HeaderMetadata()


BAD = [
    b"",
    b"{",
    b"\xff",
    b'{"mark":{"id":"x"}} trailing',
    _header({"append": {**APPEND, "range": None}}),
    _header({"append": {**APPEND, "range": {"from": 1}}}),
    _header({"append": {**APPEND, "range": {"from": 3, "to": 2}}}),
    _header({"append": {**APPEND, "range": {"from": 0, "to": 2}}}),
    _header({"append": {**APPEND, "range": {"from": "1", "to": 2}}}),
    _header({"append": {**APPEND, "payloadType": "text"}}),
    _header({"append": {**APPEND, "payloadType": None}}),
    _header({"append": {**APPEND, "origin": 1}}),
    _header({"append": {**APPEND, "version": ["1"]}}),
    _header({"delete": {}}),
    _header({"delete": {"to": 0}}),
    _header({"delete": {"to": 2**63}}),
    _header({"delete": {"to": "3"}}),
    _header({"mark": {}}),
    _header({"mark": {"id": 5}}),
    _header({"purge": {"origin": False}}),
]


@pytest.mark.parametrize("data", BAD)
def test_present_but_invalid_headers_raise_header_format_error(data):
    with pytest.raises(HeaderFormatError):
        decode_action_header(data)


@pytest.mark.parametrize(
    "header",
    [
        DeleteHeader(SeqNr(2**63 - 1), "ö", "v"),
        PurgeHeader(version="v"),
        MarkHeader("", "o", "v"),
        AppendHeader(SeqRange(SeqNr(1), SeqNr(2**63 - 1)), PayloadType.JSON, HeaderMetadata(0)),
    ],
)
def test_edge_values_round_trip(header):
    assert decode_action_header(encode_action_header(header)) == header


def test_an_append_condition_is_one_more_field_the_scala_library_ignores():
    """`expectedSeqNr` (docs/concurrency.md) is added after the fields the Scala library writes;
    its Play JSON reads take the fields they know and ignore others, so the header is as
    readable there as one without it."""
    plain = AppendHeader(SeqRange(SeqNr(6), SeqNr(7)), PayloadType.JSON, origin="o")
    for expect, field in ((5, b',"expectedSeqNr":5}'), (0, b',"expectedSeqNr":0}')):
        conditional = replace(plain, expect=expect)
        encoded = encode_action_header(conditional)
        assert encoded == encode_action_header(plain)[:-2] + field + b"}"
        assert decode_action_header(encoded) == conditional
    assert decode_action_header(encode_action_header(plain)) == plain
    assert plain.expect is None


@pytest.mark.parametrize("bad", ['"5"', "-1", "1.5", "true", "9223372036854775808"])
def test_a_bad_condition_is_a_header_format_error(bad: str):
    header = (
        '{"append":{"range":{"from":1,"to":1},"payloadType":"json","expectedSeqNr":' + bad + "}}"
    )
    with pytest.raises(HeaderFormatError):
        decode_action_header(header.encode())
