"""`BearerAuth`: ASGI middleware in front of the routes (the writer's hot append included) that
lets a request through only with a bearer token granting what its route needs.

* no token, or one that does not verify: 401 with `WWW-Authenticate: Bearer` (RFC 6750; with
  `error="invalid_token"` and the reason when a token was sent) and a problem body;
* a valid token without the route's scope, or for another topic than the path's: 403
  (`error="insufficient_scope"`);
* the key set cannot be read: 503 (nothing can be verified).

/healthz, /readyz, /metrics and the OpenAPI document stay open. Any other path, including one no
route serves, needs a valid token: an unauthenticated caller learns nothing about the API.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from fastapi.routing import APIRoute
from kjournal.api.problems import problem_for_error
from kjournal.api.schemas import Problem
from kjournal.errors import InvalidToken
from kjournal.errors import KeysUnavailable
from kjournal.errors import NotAuthenticated
from kjournal.errors import PermissionDenied

from kjournal_service.asgi import ASGIApp
from kjournal_service.asgi import Receive
from kjournal_service.asgi import Scope
from kjournal_service.asgi import Send
from kjournal_service.auth.grants import Grant
from kjournal_service.auth.grants import required_scope
from kjournal_service.auth.verifier import TokenVerifier
from kjournal_service.problems import problem_response

__all__ = ["OPEN_PATHS", "AccessRule", "BearerAuth", "access_rules"]

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset(
    {"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
)


@dataclass(frozen=True, slots=True)
class AccessRule:
    """The scope the requests of one route need (`methods` at paths matching `path`)."""

    path: re.Pattern[str]
    methods: frozenset[str]
    scope: str
    template: str


def access_rules(routes: Iterable[object]) -> tuple[AccessRule, ...]:
    """A rule per API route; a route that neither declares its scope (`grants.requires`) nor
    serves an open path is a mistake: refused here, before the service starts."""
    rules = []
    for route in routes:
        if not isinstance(route, APIRoute):
            continue
        scope = required_scope(route.endpoint)
        if scope is None:
            if route.path in OPEN_PATHS:
                continue
            raise ValueError(f"route {route.path} declares no scope (kjournal_service.auth)")
        rules.append(
            AccessRule(route.path_regex, frozenset(route.methods or ()), scope.value, route.path)
        )
    return tuple(rules)


class BearerAuth:
    def __init__(
        self,
        app: ASGIApp,
        /,
        verifier: TokenVerifier,
        rules: Sequence[AccessRule],
        realm: str,
        retry_after_s: int,
    ) -> None:
        self.app = app
        self.retry_after_s = retry_after_s
        self.verifier = verifier
        self.rules = tuple(rules)
        self.realm = realm.replace("\\", "").replace('"', "")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        token = _bearer_token(scope)
        if token is None:
            await self._refuse(scope, send, 401, "a bearer token is required", None)
            return
        try:
            grant = await self.verifier.verify(token)
        except InvalidToken as exc:
            await self._refuse(scope, send, 401, str(exc), 'error="invalid_token"')
            return
        except KeysUnavailable as exc:
            log.warning("%s %s refused: %s", scope.get("method"), scope["path"], exc)
            await self._answer(scope, send, problem_for_error(exc, scope["path"]))
            return
        denied = self._denied(scope, grant)
        if denied is not None:
            scope_needed, reason = denied
            challenge = f'error="insufficient_scope", scope="{scope_needed}"'
            await self._refuse(scope, send, 403, reason, challenge)
            return
        scope["kjournal.grant"] = grant
        await self.app(scope, receive, send)

    def _denied(self, scope: Scope, grant: Grant) -> tuple[str, str] | None:
        """(scope needed, why) if the grant does not cover the request's route and topic."""
        path: str = scope["path"]
        method: str = scope["method"]
        for rule in self.rules:
            match = rule.path.match(path)
            if match is None or method not in rule.methods:
                continue
            if rule.scope not in grant.scopes:
                return rule.scope, f"the token lacks the scope {rule.scope}"
            topic = match.groupdict().get("topic")
            if topic is not None and not grant.allows_topic(unquote(topic)):
                return rule.scope, f"the token does not grant topic {unquote(topic)!r}"
            return None
        return None  # no route serves it: 404 or 405 follows

    async def _refuse(
        self, scope: Scope, send: Send, status: int, detail: str, challenge: str | None
    ) -> None:
        error = NotAuthenticated(detail) if status == 401 else PermissionDenied(detail)
        parameters = f'realm="{self.realm}"'
        if challenge is not None:
            description = detail.replace("\\", "").replace('"', "'")
            parameters += f', {challenge}, error_description="{description}"'
        extra = (("www-authenticate", f"Bearer {parameters}"),)
        await self._answer(scope, send, problem_for_error(error, scope["path"]), extra)

    async def _answer(
        self,
        scope: Scope,
        send: Send,
        problem: Problem,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> None:
        rendered = problem_response(problem, self.retry_after_s)
        headers = [(k.encode(), v.encode()) for k, v in (*rendered.headers, *extra)]
        headers.append((b"content-length", str(len(rendered.body)).encode()))
        await send({"type": "http.response.start", "status": rendered.status, "headers": headers})
        await send({"type": "http.response.body", "body": rendered.body, "more_body": False})


def _bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = bytes(value).decode("latin-1").strip().partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                return None
            return token
    return None
