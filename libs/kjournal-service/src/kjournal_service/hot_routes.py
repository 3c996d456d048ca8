"""`HotRoutes`: ASGI middleware serving a service's hot routes (the writer's append, the reader's
journal reads and outcomes) itself.

FastAPI's routing, dependency solving and per-request exit stacks cost more CPU than a small append
or read does. A hot route's endpoint takes the request and its path parameters (as strings) and
returns a Response; this middleware matches the route as the router would (its path and methods),
calls the endpoint directly and answers an exception with the problem the app's handlers give. The
route stays registered with the app, so OpenAPI documents it and metrics name it. Hot routes are
tried before the app's own routes: none of those may match a hot route's requests.

A route whose documented endpoint takes FastAPI's parameters (queries, dependencies) names the
function that serves it hot with `served_by`: that one takes the request and the path parameters,
and validates the rest itself, with the same types.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match

from kjournal_service.asgi import ASGIApp
from kjournal_service.asgi import Receive
from kjournal_service.asgi import Scope
from kjournal_service.asgi import Send
from kjournal_service.deps import check_query
from kjournal_service.problems import ProblemHandlers

__all__ = ["HotEndpoint", "HotRoutes", "served_by"]

HotEndpoint = Callable[..., Awaitable[Response]]  # (request, **path parameters) -> Response
_SERVERS: dict[Callable[..., Any], HotEndpoint] = {}


def served_by(documented: Callable[..., Any]) -> Callable[[HotEndpoint], HotEndpoint]:
    """Make the decorated function serve `documented`'s route when it is hot."""

    def register(server: HotEndpoint) -> HotEndpoint:
        _SERVERS[documented] = server
        return server

    return register


class HotRoutes:
    def __init__(
        self, app: ASGIApp, /, routes: Sequence[APIRoute], problems: ProblemHandlers
    ) -> None:
        self.app = app
        self.routes = tuple(routes)
        self.problems = problems

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route in self.routes:
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    scope.update(child_scope)  # path_params, and the route metrics name
                    await self._serve(
                        _SERVERS.get(route.endpoint, route.endpoint), scope, receive, send
                    )
                    return
        await self.app(scope, receive, send)

    async def _serve(
        self, endpoint: HotEndpoint, scope: Scope, receive: Receive, send: Send
    ) -> None:
        request = Request(scope, receive, send)
        path_params: dict[str, Any] = scope["path_params"]
        try:
            check_query(request)
            response = await endpoint(request, **path_params)
        except Exception as exc:
            response = await self.problems.handle(request, exc)
        await response(scope, receive, send)
