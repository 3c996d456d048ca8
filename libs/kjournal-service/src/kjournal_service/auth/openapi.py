"""The OpenAPI document of a service with authentication on: the bearer scheme, each operation's
scope, and its 401 and 403 answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kjournal.api.problems import PROBLEM_CONTENT_TYPE

from kjournal_service.auth.middleware import AccessRule

__all__ = ["SCHEME", "declare_security"]

SCHEME = "bearer"

_ANSWERS = {
    "401": "no bearer token, or one that is not valid (see WWW-Authenticate)",
    "403": "the token lacks the operation's scope or the path's topic",
}


def declare_security(document: dict[str, Any], rules: Sequence[AccessRule]) -> None:
    components = document.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "a JWT from the configured issuer; each operation names the scope it "
        "needs, and the token's topics claim (if any) must grant the path's topic",
    }
    problem = {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for rule in rules:
        path = document.get("paths", {}).get(rule.template, {})
        for method in rule.methods:
            operation = path.get(method.lower())
            if not isinstance(operation, dict):
                continue
            operation["security"] = [{SCHEME: [rule.scope]}]
            responses = operation.setdefault("responses", {})
            for status, description in _ANSWERS.items():
                responses.setdefault(status, {"description": description, "content": problem})
