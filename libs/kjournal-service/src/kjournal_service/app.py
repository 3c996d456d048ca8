"""`service_app(...)`: the FastAPI application every service builds, and the app of one uvicorn
worker process; a service adds only its lifespan, routers, OpenAPI models and hot endpoints."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any
from typing import TypeVar

from fastapi import APIRouter
from fastapi import Depends
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from kjournal.api.keys import KeyRules
from kjournal.spans import recording
from kjournal.spans import tracer
from kjournal.telemetry import configure_tracing
from pydantic import BaseModel

from kjournal_service.asgi import ASGIApp
from kjournal_service.asgi import BodyLimit
from kjournal_service.asgi import KeepAliveAfterErrors
from kjournal_service.asgi import RawPathRouting
from kjournal_service.asgi import RequestMetrics
from kjournal_service.auth.install import Guard
from kjournal_service.auth.settings import AuthSettings
from kjournal_service.deps import known_query
from kjournal_service.hot_routes import HotEndpoint
from kjournal_service.hot_routes import HotRoutes
from kjournal_service.http_protocol import LimitedHttpToolsProtocol
from kjournal_service.logs import configure_logging
from kjournal_service.openapi import OpenApiTouch
from kjournal_service.openapi import finish_openapi
from kjournal_service.problems import ProblemHandlers
from kjournal_service.server_spans import ServerSpans
from kjournal_service.state import ServiceSettingsLike
from kjournal_service.state import ServiceState

__all__ = ["environment_app", "service_app"]

S = TypeVar("S", bound=ServiceSettingsLike)
Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def service_app(
    state: ServiceState[Any],
    *,
    service: str,
    description: str,
    lifespan: Lifespan,
    routers: Sequence[APIRouter],
    openapi_models: Sequence[type[BaseModel]],
    openapi_touch: OpenApiTouch | None = None,
    hot_endpoints: Sequence[HotEndpoint] = (),
    auth: AuthSettings | None = None,
) -> FastAPI:
    """The app of `kjournal-<service>`: its `state` attached (the lifespan adds the clients),
    problem handlers, the routers, and the ASGI middleware.

    `openapi_models` are added to the OpenAPI components, and `openapi_touch` may state in the
    document what the service's settings impose. `hot_endpoints`, endpoints of routes in
    `routers`, are served by `HotRoutes`, past FastAPI's routing and dependency solving."""
    http, metrics = state.http, state.metrics
    LimitedHttpToolsProtocol.configure(http.request_limits)  # this process's server
    app = _ServiceApp(
        title=f"kjournal {service}",
        version=version(f"kjournal-{service}"),
        description=description,
        lifespan=_frozen_after_start(lifespan),
        # The services export Prometheus metrics; FastAPI's OpenTelemetry hooks would look up the
        # OTel providers (and environment variables) on every request, for nothing.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        dependencies=[Depends(known_query)],
    )
    state.attach(app)
    problems = ProblemHandlers(http.retry_after_s)
    problems.install(app)
    for router in routers:
        app.include_router(router)
    keys = state.key_rules
    guard = Guard(
        auth or AuthSettings(),
        [route for router in routers for route in router.routes],
        host=http.host,
        retry_after_s=http.retry_after_s,
    )

    def touch(document: dict[str, Any]) -> None:
        if openapi_touch is not None:
            openapi_touch(document)
        guard.touch(document)

    app.openapi = lambda: _openapi(app, openapi_models, keys, touch)  # type: ignore[method-assign]
    hot = [_route_of(routers, endpoint) for endpoint in hot_endpoints]
    max_body_bytes = http.max_body_bytes

    def front(inner: ASGIApp) -> ASGIApp:
        # Metrics see every request; then the raw path is the path (the hot routes and the
        # guard match it as the router does); the guard and the body limit run before routing.
        # The server span covers all of it, refusals included (and records an exception raised
        # after the answer, which KeepAliveAfterErrors then keeps from the server). Built on the
        # first request: tracing is set up by then, or not at all.
        routed = HotRoutes(inner, routes=hot, problems=problems) if hot else inner
        guarded = guard.wrap(BodyLimit(routed, max_bytes=max_body_bytes))
        measured = RequestMetrics(RawPathRouting(guarded), metrics, service)
        return KeepAliveAfterErrors(ServerSpans(measured, tracer()) if recording() else measured)

    app.front = front
    return app


class _ServiceApp(FastAPI):
    """FastAPI with the service's own ASGI middleware (`front`) outside FastAPI's.

    A hot route's request then passes none of FastAPI's layers (server errors, exception telemetry,
    body limit), which cost a hot append measurable CPU; `HotRoutes` answers errors itself and our
    `BodyLimit` is the one limit. Every other request goes on through FastAPI's stack unchanged.
    """

    front: Callable[[ASGIApp], ASGIApp] | None = None

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        return stack if self.front is None else self.front(stack)


def _frozen_after_start(lifespan: Lifespan) -> Lifespan:
    """`lifespan`, then the start-up heap frozen out of the garbage collector's sight.

    Modules, schemas and clients live as long as the process, yet each full collection scans them
    again: tens of milliseconds under load, straight into the latency of every request in flight.
    """

    @asynccontextmanager
    async def frozen(app: FastAPI) -> AsyncIterator[None]:
        async with lifespan(app):
            gc.collect()
            gc.freeze()
            yield

    return frozen


def _route_of(routers: Sequence[APIRouter], endpoint: HotEndpoint) -> APIRoute:
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.endpoint is endpoint:
                return route
    raise ValueError(f"no route of the service's routers has the endpoint {endpoint!r}")


def _openapi(
    app: FastAPI,
    models: Sequence[type[BaseModel]],
    keys: KeyRules,
    touch: OpenApiTouch | None,
) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        app.openapi_schema = finish_openapi(schema, tuple(models), keys, touch)
    return app.openapi_schema


def environment_app(
    settings_type: Callable[[], S], create_app: Callable[[S], FastAPI], name: str
) -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1): settings from the
    environment, logging, tracing (`name`: the default service.name), then `create_app`."""
    settings = settings_type()
    configure_logging(
        settings.http.log_level, settings.http.log_format, access_log=settings.http.access_log
    )
    configure_tracing(name)
    return create_app(settings)
