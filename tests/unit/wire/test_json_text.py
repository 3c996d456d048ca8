"""json_text.dumps: orjson's fast path must write what the strict standard path writes."""

from __future__ import annotations

import json

import pytest
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
