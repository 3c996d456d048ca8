"""The writer's own request dependencies: the journal a URL names, from the writer's state, and
a JSON body parsed straight from bytes (the append hot path). The shared ones (the key or topic a
URL names, metrics, the HTTP settings) are `kjournal_service.deps`."""

from __future__ import annotations

from typing import Annotated
from typing import Any
from typing import TypeVar
from typing import overload

from fastapi import Depends
from fastapi import HTTPException
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from kjournal.writes import WritableJournal
from kjournal_service.params import IdPath
from kjournal_service.params import TopicPath
from kjournal_service.strict_json import loads_strict
from pydantic import BaseModel
from pydantic import ValidationError

from kjournal_writer.state import WriterState

M = TypeVar("M", bound=BaseModel)


async def get_journal(request: Request, topic: TopicPath, id: IdPath) -> WritableJournal:
    return WriterState.of(request.app).journal(topic, id)


JournalDep = Annotated[WritableJournal, Depends(get_journal)]


def openapi_request_body(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """OpenAPI `requestBody` for a route that parses its body itself (parse_json_body)."""
    return {
        "requestBody": {
            "required": required,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }


@overload
async def parse_json_body(request: Request, model: type[M]) -> M: ...


@overload
async def parse_json_body(request: Request, model: type[M], *, required: bool) -> M | None: ...


async def parse_json_body(request: Request, model: type[M], *, required: bool = True) -> M | None:
    """The body as `model` (strict JSON, kjournal_service.strict_json); an empty optional body is
    None. Errors look exactly like FastAPI's own body validation errors."""
    body = await request.body()
    if not body and not required:
        return None
    content_type = request.headers.get("content-type", "")
    if "json" not in content_type:
        raise HTTPException(415, f"expected an application/json body, not {content_type!r}")
    data = loads_strict(body, WriterState.of(request.app).settings.http.max_json_depth)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        raise RequestValidationError(errors) from None
