"""`create_app(settings)`: the writer's FastAPI application.

The lifespan opens the write side (`kjournal.writes.WriteSide`: a Kafka producer; no Cassandra
at all) that learns each append's outcome from the reader (`ReaderOutcomes`), and closes both on shutdown, after uvicorn
has let in-flight requests finish, so every acknowledged append was taken by the journal first.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import MarkRequest
from kjournal.errors import NotConfigured
from kjournal.writes import WriteSide
from kjournal_service.app import environment_app
from kjournal_service.app import service_app
from kjournal_service.dependency_watch import DependencyWatch
from kjournal_service.health import health_router
from kjournal_service.health import kafka_check

from kjournal_writer.outcomes import ReaderOutcomes
from kjournal_writer.routes import journals
from kjournal_writer.settings import Settings
from kjournal_writer.settings import WriterHttpSettings
from kjournal_writer.state import WriterState

log = logging.getLogger(__name__)

DESCRIPTION = """Appends, deletes, purges and marks journals in Kafka (Kafka rights only).

Errors are `application/problem+json` (RFC 9457) with `type` = `urn:kjournal:problem:<slug>`.
Journal ids are percent-encoded path segments; topics must start with the configured prefix.
"""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = WriterState.of(app)
    settings = state.settings
    if not settings.reader.url:
        raise NotConfigured(
            "KJOURNAL_READER__URL is not set: the writer answers an append only once the reader "
            "has told it the append's outcome (docs/concurrency.md)"
        )
    async with AsyncExitStack() as stack:
        outcomes = await stack.enter_async_context(ReaderOutcomes(settings.reader))
        writes = state.writes = await stack.enter_async_context(
            WriteSide(
                settings.kafka,
                outcomes=outcomes,
                origin=settings.origin,
                metrics=state.metrics,
            )
        )
        state.topics = writes.topics
        await stack.enter_async_context(
            DependencyWatch(
                "writer",
                {"kafka": kafka_check(writes.topics, settings.http.topic_prefix)},
                state.metrics,
                settings.http.dependency_check_interval_s,
                settings.http.readiness_timeout_s,
            )
        )
        log.info("writer started; Kafka at %s", settings.kafka.bootstrap_servers)
        yield
        log.info("writer stopping: closing the Kafka producer")
    log.info("writer stopped")


def _state_limits(document: dict[str, Any], http: WriterHttpSettings) -> None:
    events = document["components"]["schemas"]["AppendRequest"]["properties"]["events"]
    events["maxItems"] = http.max_events_per_append


def create_app(settings: Settings) -> FastAPI:
    return service_app(
        WriterState(settings),
        service="writer",
        description=DESCRIPTION,
        lifespan=_lifespan,
        routers=(journals.router, health_router("Kafka answers a metadata request")),
        openapi_models=(AppendRequest, MarkRequest),
        openapi_touch=lambda document: _state_limits(document, settings.http),
        hot_endpoints=(journals.append,),
        auth=settings.auth,
    )


def app_from_environment() -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1)."""
    return environment_app(Settings, create_app, "kjournal-writer")
