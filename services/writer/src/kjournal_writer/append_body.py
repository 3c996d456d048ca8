"""An append body → the arguments of `Journal.append`, without stalling the event loop.

A small body (most appends) is parsed and validated in place; a large one (over
`KJOURNAL_HTTP__OFFLOAD_BODY_BYTES`) in a worker thread. Validation goes event by event, so even
there the interpreter lock is released between events and the loop keeps serving other requests
(one pydantic call over a whole 200 000-event body would hold it for over a second). The count
of events is checked before any of them is validated.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import HTTPException
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from kjournal.api.convert import AppendArgs
from kjournal.api.convert import append_args
from kjournal.api.schemas import AppendEnvelope
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import EventIn
from kjournal.errors import TooManyEvents
from kjournal_service.strict_json import loads_strict
from pydantic import TypeAdapter
from pydantic import ValidationError

__all__ = ["read_append"]

_EVENT: TypeAdapter[EventIn] = TypeAdapter(EventIn)


async def read_append(
    request: Request, max_events: int, max_depth: int, offload_bytes: int
) -> AppendArgs:
    """The validated body of an append request (RequestValidationError, TooManyEvents,
    NestedTooDeeply, ...)."""
    content_type = request.headers.get("content-type", "")
    if "json" not in content_type:
        raise HTTPException(415, f"expected an application/json body, not {content_type!r}")
    body = await request.body()
    if len(body) <= offload_bytes:
        return parse_append(body, max_events, max_depth)
    return await asyncio.to_thread(parse_append, body, max_events, max_depth)


def parse_append(body: bytes, max_events: int, max_depth: int) -> AppendArgs:
    data = loads_strict(body, max_depth)
    if not isinstance(data, dict):
        raise _invalid(("body",), "an append body is a JSON object")
    events = data.get("events")
    if not isinstance(events, list):
        raise _invalid(("body", "events"), "events must be a list of events")
    if len(events) > max_events:
        raise TooManyEvents(len(events), max_events)
    errors: list[Any] = []
    envelope = _validate(
        lambda: AppendEnvelope.model_validate({k: v for k, v in data.items() if k != "events"}),
        ("body",),
        errors,
    )
    validated = [
        _validate(lambda item=item: _EVENT.validate_python(item), ("body", "events", index), errors)
        for index, item in enumerate(events)
    ]
    if errors:
        raise RequestValidationError(errors)
    assert envelope is not None
    request = AppendRequest.model_construct(
        events=validated,
        metadata=envelope.metadata,
        expire_after=envelope.expire_after,
        headers=envelope.headers,
    )
    return append_args(request)


def _validate(validate: Any, loc: tuple[Any, ...], errors: list[Any]) -> Any:
    try:
        return validate()
    except ValidationError as exc:
        errors.extend({**error, "loc": (*loc, *error["loc"])} for error in exc.errors())
        return None


def _invalid(loc: tuple[Any, ...], message: str) -> RequestValidationError:
    return RequestValidationError([{"type": "value_error", "loc": loc, "msg": message}])
