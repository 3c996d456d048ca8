"""Request bodies as strict JSON: one value, no NaN, and no object with a key twice.

Python's and pydantic's parsers keep the last of two equal keys without a word, so
`{"seqNr": 1, "seqNr": 2}` would store seqNr 2 and two `events` keys the second list. Here such
a body is refused like any other invalid body, with the path of the object that repeats a key.
Errors are FastAPI's `RequestValidationError`s (rendered as `validation-error` problems).
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from fastapi.exceptions import RequestValidationError

__all__ = ["loads_strict"]


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


def loads_strict(body: bytes) -> Any:
    """The body's JSON value; RequestValidationError if it is not one strict JSON value."""
    try:
        return _decoder.decode(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise _invalid("the body is not UTF-8", "json_invalid") from None
    except ValueError as exc:  # json.JSONDecodeError included
        raise _invalid(f"Invalid JSON: {exc}", "json_invalid") from None


def _invalid(message: str, kind: str) -> RequestValidationError:
    return RequestValidationError([{"type": kind, "loc": ("body",), "msg": message, "input": None}])
