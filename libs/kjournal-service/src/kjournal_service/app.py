"""`service_app(...)`: the FastAPI application every service builds, and the app of one uvicorn
worker process; a service adds only its lifespan, routers and OpenAPI models."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from importlib.metadata import version
from typing import Any, Protocol, TypeVar

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from kjournal.api.asgi import BodyLimit, RawPathRouting, RequestMetrics
from kjournal.api.logs import configure_logging
from kjournal.api.openapi import finish_openapi
from kjournal.api.settings import HttpSettings
from kjournal.metrics_prometheus import PrometheusMetrics
from pydantic import BaseModel

from kjournal_service.problems import ProblemHandlers

__all__ = ["ServiceSettingsLike", "environment_app", "service_app"]


class ServiceSettingsLike(Protocol):
    """What the shared glue reads of a service's settings: the HTTP section."""

    @property
    def http(self) -> HttpSettings: ...


S = TypeVar("S", bound=ServiceSettingsLike)


def service_app(
    settings: ServiceSettingsLike,
    *,
    service: str,
    description: str,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
    routers: Iterable[APIRouter],
    openapi_models: Sequence[type[BaseModel]],
) -> FastAPI:
    """The app of `kjournal-<service>`: settings, metrics and key rules in `app.state` (the
    lifespan adds the clients), problem handlers, the routers, and the ASGI middleware."""
    metrics = PrometheusMetrics()
    app = FastAPI(
        title=f"kjournal {service}",
        version=version(f"kjournal-{service}"),
        description=description,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.key_rules = settings.http.key_rules
    ProblemHandlers(settings.http.retry_after_s).install(app)
    for router in routers:
        app.include_router(router)
    app.openapi = lambda: _openapi(app, openapi_models)  # type: ignore[method-assign]
    # Added last = outermost: metrics see every request, the limit runs before routing.
    app.add_middleware(RawPathRouting)
    app.add_middleware(BodyLimit, max_bytes=settings.http.max_body_bytes)
    app.add_middleware(RequestMetrics, metrics=metrics, service=service)
    return app


def _openapi(app: FastAPI, models: Sequence[type[BaseModel]]) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        app.openapi_schema = finish_openapi(schema, tuple(models))
    return app.openapi_schema


def environment_app(settings_type: Callable[[], S], create_app: Callable[[S], FastAPI]) -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1): settings from the
    environment, logging, then `create_app`."""
    settings = settings_type()
    configure_logging(settings.http.log_level, settings.http.log_format)
    return create_app(settings)
