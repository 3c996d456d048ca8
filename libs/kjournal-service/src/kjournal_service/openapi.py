"""Touches on a generated OpenAPI document that no route declaration can express."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from kjournal.api.keys import KeyRules
from kjournal.api.schemas import RequestModel
from pydantic import BaseModel

__all__ = ["OpenApiTouch", "finish_openapi", "topic_schema"]

OpenApiTouch = Callable[[dict[str, Any]], None]
"""A service's own change to its finished document (e.g. the limits its settings impose)."""


def topic_schema(prefix: str) -> dict[str, Any]:
    """JSON schema of a journal topic name: Kafka's characters and length, the given prefix."""
    return {
        "pattern": f"^{re.escape(prefix)}[a-zA-Z0-9._-]*$",
        "minLength": max(1, len(prefix)),
        "maxLength": 249,
    }


def _key_parameter_schema(name: str, keys: KeyRules) -> dict[str, Any]:
    if name == "topic":
        return topic_schema(keys.topic_prefix)
    if name == "id":
        return {"minLength": 1, "maxLength": keys.max_id_length}
    return {}


def finish_openapi(
    schema: dict[str, Any],
    models: Sequence[type[BaseModel]] = (),
    keys: KeyRules | None = None,
    touch: OpenApiTouch | None = None,
) -> dict[str, Any]:
    """Drop FastAPI's default 422 answers (validation errors are 400 problems here), state what
    the `topic` and `id` path parameters must look like (Kafka's rules, this service's prefix and
    id length), add `models` (bodies parsed by the route itself, NDJSON line shapes) to the
    components, and apply the service's own `touch`."""
    keys = keys or KeyRules()
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict):
                operation.get("responses", {}).pop("422", None)
                for parameter in operation.get("parameters", ()):
                    if parameter.get("in") == "path":
                        parameter["schema"] = {
                            **parameter.get("schema", {}),
                            **_key_parameter_schema(parameter.get("name", ""), keys),
                        }
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    for model in models:
        definition = model.model_json_schema(
            by_alias=True,
            ref_template="#/components/schemas/{model}",
            mode="validation" if issubclass(model, RequestModel) else "serialization",
        )
        components.update(definition.pop("$defs", {}))
        components[model.__name__] = definition
    if touch is not None:
        touch(schema)
    return schema
