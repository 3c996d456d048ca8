"""Conditional append headers ↔ the append's `expect` (kjournal/api/conditions.py)."""

from __future__ import annotations

import pytest
from kjournal.api.conditions import condition_headers
from kjournal.api.conditions import entity_tag
from kjournal.api.conditions import parse_condition
from kjournal.errors import InvalidInput


@pytest.mark.parametrize(
    ("if_match", "if_none_match", "expect"),
    [
        (None, None, None),
        ('"5"', None, 5),
        (' "5" ', None, 5),
        ('"0"', None, 0),
        ("5", None, 5),  # not quoted: the tag it obviously means
        (None, "*", 0),
        ('"9223372036854775806"', None, 2**63 - 2),
    ],
)
def test_conditions_parse(if_match: str | None, if_none_match: str | None, expect: int | None):
    assert parse_condition(if_match, if_none_match) == expect


@pytest.mark.parametrize(
    ("if_match", "if_none_match"),
    [
        ('"5', None),  # half quoted
        ('W/"5"', None),  # weak
        ('"5", "6"', None),  # a list
        ("*", None),
        ('"-1"', None),
        ('"05"', None),
        ('"9223372036854775807"', None),  # the journal can never be at the last seqNr and grow
        (None, '"5"'),
        ('"5"', "*"),  # both
    ],
)
def test_other_conditions_are_400(if_match: str | None, if_none_match: str | None):
    with pytest.raises(InvalidInput):
        parse_condition(if_match, if_none_match)


def test_headers_round_trip():
    for expect in (None, 0, 1, 42):
        headers = condition_headers(expect)
        assert parse_condition(headers.get("if-match"), headers.get("if-none-match")) == expect
    assert entity_tag(None) == entity_tag(0) == '"0"'
    assert entity_tag(7) == '"7"'
