"""Touches on a generated OpenAPI document that no route declaration can express."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["finish_openapi", "topic_schema"]


def topic_schema(prefix: str) -> dict[str, Any]:
    """JSON schema of a journal topic name: Kafka's characters and length, the given prefix."""
    return {
        "pattern": f"^{re.escape(prefix)}[a-zA-Z0-9._-]*$",
        "minLength": max(1, len(prefix)),
        "maxLength": 249,
    }


def finish_openapi(
    schema: dict[str, Any], models: Sequence[type[BaseModel]] = (), topic_prefix: str = ""
) -> dict[str, Any]:
    """Drop FastAPI's default 422 answers (validation errors are 400 problems here), state what
    a `topic` path parameter must look like (Kafka's rules and this service's prefix), and add
    `models` (e.g. NDJSON line shapes, which no response_model names) to the components."""
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict):
                operation.get("responses", {}).pop("422", None)
                for parameter in operation.get("parameters", ()):
                    if parameter.get("in") == "path" and parameter.get("name") == "topic":
                        parameter["schema"] = {
                            **parameter.get("schema", {}),
                            **topic_schema(topic_prefix),
                        }
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
