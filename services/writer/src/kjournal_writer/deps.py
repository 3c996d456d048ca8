"""The writer's own request helpers: a JSON body parsed straight from bytes (the append hot
path). The shared dependencies (the open Journals, the journal a URL names, metrics) are
`kjournal_service.deps`."""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI `requestBody` for a route that parses its body itself (parse_json_body)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }


async def parse_json_body(request: Request, model: type[M]) -> M:
    """The body as `model`; errors look exactly like FastAPI's own body validation errors."""
    content_type = request.headers.get("content-type", "")
    if "json" not in content_type:
        raise HTTPException(415, f"expected an application/json body, not {content_type!r}")
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        raise RequestValidationError(errors) from None
