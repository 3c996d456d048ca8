"""Request bodies as strict JSON: one value, no NaN, no object with a key twice, and nested no
deeper than a limit.

Python's and pydantic's parsers keep the last of two equal keys without a word, so
`{"seqNr": 1, "seqNr": 2}` would store seqNr 2 and two `events` keys the second list. Here such
a body is refused like any other invalid body, with the path of the object that repeats a key.
Errors are FastAPI's `RequestValidationError`s (rendered as `validation-error` problems).

Python's parser (and pydantic's validation after it) recurses once per level of nesting: a body
of 10 000 nested arrays was a RecursionError, a 500. The depth is measured first, without
recursion or Python code per byte: strings are cut out (a bracket in a string is no nesting), the
brackets left are turned into +1 and -1 steps, and the deepest running sum is the depth. A body
deeper than the limit is `NestedTooDeeply` (400 `too-deep`) before anything parses it.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any
from typing import NoReturn

from fastapi.exceptions import RequestValidationError
from kjournal.errors import NestedTooDeeply

__all__ = ["json_depth_exceeds", "loads_strict"]

# A JSON string: possessive, so a long string is one linear pass with no backtracking.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1, +1, -1, -1


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether the JSON text `body` nests arrays and objects more than `limit` levels deep
    (a top-level array is 1 level). Text that is not JSON gives some answer: the parser that
    runs next refuses it anyway."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # not enough brackets, in strings or not, to nest that deep
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    steps = memoryview(brackets.translate(_STEPS)).cast("b")
    return max(accumulate(steps), default=0) > limit


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return result


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_no_constant)


def loads_strict(body: bytes, max_depth: int) -> Any:
    """The body's JSON value; NestedTooDeeply if it nests deeper than `max_depth`,
    RequestValidationError if it is not one strict JSON value."""
    if json_depth_exceeds(body, max_depth):
        raise NestedTooDeeply(max_depth)
    try:
        return _decoder.decode(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise _invalid("the body is not UTF-8", "json_invalid") from None
    except ValueError as exc:  # json.JSONDecodeError included
        raise _invalid(f"Invalid JSON: {exc}", "json_invalid") from None


def _invalid(message: str, kind: str) -> RequestValidationError:
    return RequestValidationError([{"type": kind, "loc": ("body",), "msg": message, "input": None}])
