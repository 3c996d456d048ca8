"""expireAfter strings, checked against scala.concurrent.duration (durations-scala.json)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kjournal.errors import InvalidDuration
from kjournal.model import ExpireAfter
from kjournal.model.durations import format_duration
from kjournal.model.durations import parse_duration
from kjournal.model.expire_after import MAX_NANOS
from kjournal.model.expire_after import NANOS_PER_UNIT

from tests.unit.wire import catalog

SCALA = json.loads(catalog.read("durations-scala.json"))
SCALA_UNIT = {f"{unit.upper()}S": unit for unit in NANOS_PER_UNIT}


@pytest.mark.parametrize("case", SCALA["parse"], ids=lambda case: repr(case["input"]))
def test_parse_agrees_with_scala(case):
    text = case["input"]
    if "nanos" in case and case["nanos"] > 0:
        value = parse_duration(text)
        assert value.nanos == case["nanos"]
        assert format_duration(value) == case["string"]
    else:
        # Scala fails, is infinite, or (zero, negative) is finite but not a valid expireAfter.
        with pytest.raises(InvalidDuration):
            parse_duration(text)


@pytest.mark.parametrize("case", SCALA["format"], ids=lambda case: case["string"])
def test_format_agrees_with_scala(case):
    unit = SCALA_UNIT[case["unit"]]
    assert format_duration(ExpireAfter.of(case["length"], unit)) == case["string"]
    assert format_duration(ExpireAfter(case["length"] * NANOS_PER_UNIT[unit])) == case["coarsest"]


def test_the_scala_table_covers_the_interesting_cases():
    inputs = {case["input"] for case in SCALA["parse"]}
    assert {"1 day", "30 minutes", "1.5 days", "5 µs", "106752 days", "1 ds", "Inf"} <= inputs


def test_expire_after_refuses_non_positive_and_too_long_durations():
    for nanos in (0, -1, MAX_NANOS + 1):
        with pytest.raises(InvalidDuration):
            ExpireAfter(nanos)
    with pytest.raises(InvalidDuration):
        ExpireAfter(90, "microsecond")
    with pytest.raises(InvalidDuration):
        ExpireAfter(1, "fortnight")


def test_the_unit_takes_no_part_in_equality():
    assert ExpireAfter.of(60, "minutes") == ExpireAfter.of(1, "hour") == ExpireAfter(3600 * 10**9)
    assert hash(ExpireAfter.of(60, "minutes")) == hash(ExpireAfter.of(1, "hour"))


units = st.sampled_from(list(NANOS_PER_UNIT))


@st.composite
def expire_afters(draw: st.DrawFn) -> ExpireAfter:
    unit = draw(units)
    length = draw(st.integers(1, MAX_NANOS // NANOS_PER_UNIT[unit]))
    return (
        ExpireAfter.of(length, unit)
        if draw(st.booleans())
        else ExpireAfter(length * NANOS_PER_UNIT[unit])
    )


@given(expire_afters())
def test_format_then_parse_is_identity_including_the_unit(value):
    parsed = parse_duration(format_duration(value))
    assert parsed == value
    assert parsed.length_and_unit() == value.length_and_unit()


@given(st.text(max_size=30))
def test_parse_never_raises_anything_but_invalid_duration(text):
    try:
        value = parse_duration(text)
    except InvalidDuration:
        return
    assert 0 < value.nanos <= MAX_NANOS
