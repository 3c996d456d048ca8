"""ndjson_line: orjson's speed, the standard library's answers where orjson refuses a value."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kjournal_service.ndjson import ndjson_line

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_a_line_is_one_compact_json_document_of_the_value(value: object) -> None:
    line = ndjson_line(value)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert json.loads(line) == value


def test_non_ascii_is_raw_utf8_and_control_characters_are_escaped() -> None:
    assert ndjson_line({"a": "é😀\n\x1f"}) == '{"a":"é😀\\n\\u001f"}\n'.encode()


def test_integers_beyond_64_bits_take_the_standard_path() -> None:
    assert (
        ndjson_line({"n": 2**70, "m": -(2**64)})
        == b'{"n":1180591620717411303424,"m":-18446744073709551616}\n'
    )


def test_what_is_not_json_still_raises() -> None:
    with pytest.raises(TypeError):
        ndjson_line({"s": {1, 2}})
    with pytest.raises(UnicodeEncodeError):
        ndjson_line({"s": "\ud800"})
