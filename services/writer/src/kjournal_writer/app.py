"""`create_app(settings)`: the writer's FastAPI application.

The lifespan opens a write-only `Journals` (Kafka producer; no Cassandra at all) and closes it on
shutdown, after uvicorn has let in-flight requests finish, so every acknowledged append was
acknowledged by Kafka first.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from kjournal.api.asgi import BodyLimit, RawPathRouting, RequestMetrics
from kjournal.api.logs import configure_logging
from kjournal.api.openapi import finish_openapi
from kjournal.api.schemas import AppendRequest
from kjournal.journal import Journals, JournalsSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics_prometheus import PrometheusMetrics

from kjournal_writer.problems import ProblemHandlers
from kjournal_writer.routes import health, journals
from kjournal_writer.settings import Settings

log = logging.getLogger(__name__)

DESCRIPTION = """Appends, deletes, purges and marks journals in Kafka (Kafka rights only).

Errors are `application/problem+json` (RFC 9457) with `type` = `urn:kjournal:problem:<slug>`.
Journal ids are percent-encoded path segments; topics must start with the configured prefix.
"""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    async with AsyncExitStack() as stack:
        app.state.journals = await stack.enter_async_context(
            Journals(
                JournalsSettings(kafka=settings.kafka, origin=settings.origin),
                metrics=app.state.metrics,
            )
        )
        app.state.topics = await stack.enter_async_context(TopicPartitions(settings.kafka))
        log.info("writer started; Kafka at %s", settings.kafka.bootstrap_servers)
        yield
        log.info("writer stopping: closing the Kafka producer")
    log.info("writer stopped")


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        app.openapi_schema = finish_openapi(schema, (AppendRequest,))
    return app.openapi_schema


def create_app(settings: Settings) -> FastAPI:
    metrics = PrometheusMetrics()
    app = FastAPI(
        title="kjournal writer",
        version=version("kjournal-writer"),
        description=DESCRIPTION,
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.key_rules = settings.http.key_rules
    ProblemHandlers(settings.http.retry_after_s).install(app)
    app.include_router(journals.router)
    app.include_router(health.router)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    # Added last = outermost: metrics see every request, the limit runs before routing.
    app.add_middleware(RawPathRouting)
    app.add_middleware(BodyLimit, max_bytes=settings.http.max_body_bytes)
    app.add_middleware(RequestMetrics, metrics=metrics, service="writer")
    return app


def app_from_environment() -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1)."""
    settings = Settings()
    configure_logging(settings.http.log_level, settings.http.log_format)
    return create_app(settings)
