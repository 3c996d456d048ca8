"""`create_app(settings)`: the reader's FastAPI application.

The lifespan opens, in order: the Cassandra connection (in the background: the reader starts
and answers 503 while Cassandra is unreachable) and the read side over that eventual reader
(`kjournal.reads.ReadSide`: partition counts, consumer pool, the fold of each topic asked about;
no producer); it closes them in reverse.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from contextlib import asynccontextmanager

from fastapi import FastAPI
from kjournal.api.schemas import EventOut
from kjournal.api.schemas import FeedEntryOut
from kjournal.api.schemas import JournalIdOut
from kjournal.cassandra.connection import CassandraConnection
from kjournal.cassandra.connection import LazyEventualReader
from kjournal.reads import ReadSide
from kjournal_service.app import environment_app
from kjournal_service.app import service_app
from kjournal_service.dependency_watch import DependencyWatch
from kjournal_service.health import kafka_check

from kjournal_reader.routes import health
from kjournal_reader.routes import journals
from kjournal_reader.routes import outcomes
from kjournal_reader.routes import topics
from kjournal_reader.settings import Settings
from kjournal_reader.state import ReaderState

log = logging.getLogger(__name__)

DESCRIPTION = """Reads journals: Cassandra merged with the not-yet-replicated Kafka tail, so a
read that starts after an append was acknowledged returns it, replicator running or not.

Event and id lists stream as NDJSON (`application/x-ndjson`). Errors are
`application/problem+json` (RFC 9457) with `type` = `urn:kjournal:problem:<slug>`.
"""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = ReaderState.of(app)
    settings = state.settings
    async with AsyncExitStack() as stack:
        cassandra = state.cassandra = await stack.enter_async_context(
            CassandraConnection(settings.cassandra, retry_max_s=settings.cassandra_retry_max_s)
        )
        eventual = state.eventual = LazyEventualReader(cassandra)
        reads = state.reads = await stack.enter_async_context(
            ReadSide(
                settings.kafka,
                eventual,
                consumer_pool=settings.consumer_pool,
                fold=settings.fold,
                metrics=state.metrics,
            )
        )
        state.topics = reads.topics
        checks = {
            "kafka": kafka_check(reads.topics, settings.http.topic_prefix),
            "cassandra": cassandra.probe,
        }
        await stack.enter_async_context(
            DependencyWatch(
                "reader",
                checks,
                state.metrics,
                settings.http.dependency_check_interval_s,
                settings.http.readiness_timeout_s,
            )
        )
        log.info(
            "reader started; Kafka at %s, Cassandra at %s",
            settings.kafka.bootstrap_servers,
            cassandra.where,
        )
        yield
        log.info("reader stopping")
    log.info("reader stopped")


def create_app(settings: Settings) -> FastAPI:
    return service_app(
        ReaderState(settings),
        service="reader",
        description=DESCRIPTION,
        lifespan=_lifespan,
        routers=(
            journals.router,
            outcomes.journal_router,
            topics.router,
            outcomes.topic_router,
            health.router,
        ),
        openapi_models=(EventOut, FeedEntryOut, JournalIdOut, *outcomes.OPENAPI_MODELS),
        hot_endpoints=(outcomes.outcomes, journals.events, journals.pointer),
        auth=settings.auth,
    )


def app_from_environment() -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1)."""
    return environment_app(Settings, create_app, "kjournal-reader")
