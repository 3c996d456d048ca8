"""Touches on a generated OpenAPI document that no route declaration can express."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["finish_openapi"]


def finish_openapi(
    schema: dict[str, Any], models: Sequence[type[BaseModel]] = ()
) -> dict[str, Any]:
    """Drop FastAPI's default 422 answers (validation errors are 400 problems here) and add
    `models` (e.g. NDJSON line shapes, which no response_model names) to the components."""
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict):
                operation.get("responses", {}).pop("422", None)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    for model in models:
        definition = model.model_json_schema(
            by_alias=True, ref_template="#/components/schemas/{model}", mode="serialization"
        )
        components.update(definition.pop("$defs", {}))
        components[model.__name__] = definition
    return schema
