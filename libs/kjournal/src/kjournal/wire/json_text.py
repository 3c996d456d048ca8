"""JSON text as the Scala library writes it (jsoniter-scala defaults) and a strict reader.

Writing: compact (no spaces), object keys in insertion order, non-ASCII as raw UTF-8, control
characters and DEL escaped (`\\n`, `\\u001f`, `\\u007f`). Reading: UTF-8 only, exactly one JSON
value, no NaN/Infinity. Both raise ValueError; callers turn it into their own error class.

Writing goes through orjson (several times faster; the replicator writes every JSON payload it
stores) and falls back to the standard library whenever orjson would differ in what it accepts:
orjson writes NaN and infinities as `null` and refuses integers beyond 64 bits, so any output with
a `null` and any orjson error take the strict standard path. Reading goes through orjson too,
except where it would differ: it turns integers beyond 64 bits into floats, silently, so text
with a run of 19 or more digits (every such integer has one) takes the standard path, as does
anything orjson refuses (the standard path then accepts it or raises its own error).
"""

from __future__ import annotations

import json
from typing import NoReturn

import orjson

from kjournal.model import JsonValue


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


_LONG_MIN = -(2**63)
_LONG_MAX = 2**63 - 1

_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_decoder = json.JSONDecoder(parse_constant=_reject_constant)
# Dataclasses and datetimes are not JSON values: let them fail on the standard path.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
# 2**63 has 19 digits: a shorter run of digits is never an integer orjson could turn into a float.
# A run is found by mapping every digit to "0" and everything else to "x" and looking for 19
# zeros: a tenth of what the regular expression [0-9]{19} costs on a 1 KiB record.
_DIGIT_RUNS = bytes(ord("0") if byte in b"0123456789" else ord("x") for byte in range(256))
_LONG_RUN = b"0" * 19


def _has_long_digits(data: bytes) -> bool:
    return _LONG_RUN in data.translate(_DIGIT_RUNS)


def dumps(value: object) -> str:
    """Compact JSON text; ValueError for values JSON cannot hold (NaN, sets, lone surrogates)."""
    try:
        fast = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        pass
    else:
        if b"null" not in fast:
            text = fast.decode("utf-8")
            return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    try:
        text = _encoder.encode(value)
    except (TypeError, RecursionError) as exc:
        raise ValueError(f"not a JSON value: {exc}") from exc
    if "\x7f" in text:  # jsoniter escapes DEL; json leaves it raw. It can only occur in strings.
        text = text.replace("\x7f", "\\u007f")
    return text


def dump_bytes(value: object) -> bytes:
    """UTF-8 bytes of `dumps(value)`."""
    try:
        return dumps(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text is not valid Unicode (lone surrogate?): {exc}") from exc


def loads(data: bytes | bytearray | memoryview | str) -> JsonValue:
    """Parse exactly one JSON value from UTF-8 bytes or text."""
    if isinstance(data, str):
        long_digits = _has_long_digits(data.encode("utf-8", "surrogatepass"))
    else:
        data = bytes(data)
        long_digits = _has_long_digits(data)
    if not long_digits:
        try:
            fast: JsonValue = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            return fast
    text = data if isinstance(data, str) else data.decode("utf-8")
    try:
        result: JsonValue = _decoder.decode(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
    return result


def read_long(value: JsonValue, name: str) -> int:
    """A JSON number that is a whole 64-bit integer (Play's Reads[Long]); `1.0` is accepted."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and _LONG_MIN <= value <= _LONG_MAX:
        return value
    raise ValueError(f"{name} must be a 64-bit integer, got {value!r}")
