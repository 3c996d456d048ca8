"""json_text.dumps: orjson's fast path must write what the strict standard path writes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kjournal.wire import json_text

_STANDARD = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        {"type": "ItemAdded", "item": {"sku": "é-日本", "qty": 3}, "tags": ["a", "b"]},
        ['x\x1f\n\t"\\ \u2028', 0, -1, True, False, 2.5, 0.1],
        {"nullable": "null inside a string", "n": None},
        2**63 - 1,
        "",
    ],
)
def test_writes_what_the_standard_encoder_writes(value: object) -> None:
    assert json_text.dumps(value) == _STANDARD.encode(value)


def test_integers_beyond_64_bits_stay_exact() -> None:
    assert json_text.dumps({"big": 2**70}) == '{"big":1180591620717411303424}'


@pytest.mark.parametrize("value", [float("nan"), [float("inf")], {"x": float("-inf")}])
def test_nan_and_infinities_are_refused_not_written_as_null(value: object) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_text.dumps(value)


def test_del_is_escaped_on_the_fast_path() -> None:
    assert json_text.dumps({"k": "a\x7fb"}) == '{"k":"a\\u007fb"}'


# json_text.loads: orjson's fast path must read what the strict standard path reads.

_STANDARD_DECODER = json.JSONDecoder()


def standard_loads(text: str) -> object:
    return _STANDARD_DECODER.decode(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"ItemAdded","item":{"sku":"é-日本","qty":3},"tags":["a","b"],"n":null}',
        '[0,-1,true,false,2.5,0.1,-0.0,1e300,"\\u2028\\n\\"\\\\"]',
        '{"dup":1,"dup":2}',
        "18446744073709551615",
        "-9223372036854775808",
        '  {"spaces" : [ 1 , 2 ] }  ',
    ],
)
def test_reads_what_the_standard_decoder_reads(text: str) -> None:
    expected = standard_loads(text)
    for data in (text, text.encode("utf-8"), bytearray(text.encode("utf-8"))):
        value = json_text.loads(data)
        assert value == expected
        assert json.dumps(value) == json.dumps(expected)  # same types: no int became a float


@pytest.mark.parametrize(
    "big", ["18446744073709551616", "-9223372036854775809", "123456789012345678901234567890"]
)
def test_integers_beyond_64_bits_are_read_exactly(big: str) -> None:
    value = json_text.loads(f'{{"big":{big},"list":[{big}]}}'.encode())
    assert value == {"big": int(big), "list": [int(big)]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"NaN", "NaN is not valid JSON"),
        (b'{"x":-Infinity}', "-Infinity is not valid JSON"),
        (b'{"x":1} trailing', "Extra data"),
        (b"\xff", "utf-8"),
    ],
)
def test_what_both_refuse_gets_the_standard_error(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        json_text.loads(data)


def test_what_only_orjson_refuses_is_read_by_the_standard_path() -> None:
    # A lone surrogate escape: orjson refuses it; the standard decoder reads it, as before.
    assert json_text.loads(b'["\\ud800"]') == ["\ud800"]


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(_JSON_VALUES)
def test_any_json_text_reads_as_the_standard_decoder_reads_it(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    expected = standard_loads(text)
    read = json_text.loads(text.encode("utf-8"))
    assert json.dumps(read) == json.dumps(expected)
