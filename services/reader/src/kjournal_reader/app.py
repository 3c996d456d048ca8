"""`create_app(settings)`: the reader's FastAPI application.

The lifespan opens, in order: the Cassandra connection (in the background: the reader starts
and answers 503 while Cassandra is unreachable) and a read-only `Journals` with that eventual
reader (partition counts, consumer pool, the fold of each topic asked about, no producer); it closes them in reverse.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI
from kjournal.api.schemas import EventOut, FeedEntryOut, JournalIdOut
from kjournal.cassandra.connection import CassandraConnection, LazyEventualReader
from kjournal.journal import Journals
from kjournal.read.outcome import LocalOutcomes
from kjournal_service.app import environment_app, service_app
from kjournal_service.dependency_watch import DependencyWatch
from kjournal_service.health import kafka_check
from kjournal_service.state import ServiceState

from kjournal_reader.routes import health, journals, outcomes, topics
from kjournal_reader.settings import Settings
from kjournal_reader.stream_slots import StreamSlots

log = logging.getLogger(__name__)

DESCRIPTION = """Reads journals: Cassandra merged with the not-yet-replicated Kafka tail, so a
read that starts after an append was acknowledged returns it, replicator running or not.

Event and id lists stream as NDJSON (`application/x-ndjson`). Errors are
`application/problem+json` (RFC 9457) with `type` = `urn:kjournal:problem:<slug>`.
"""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServiceState[Settings] = ServiceState.of(app)
    settings = state.settings
    async with AsyncExitStack() as stack:
        cassandra = await stack.enter_async_context(
            CassandraConnection(settings.cassandra, retry_max_s=settings.cassandra_retry_max_s)
        )
        eventual = LazyEventualReader(cassandra)
        app.state.cassandra = cassandra
        app.state.eventual = eventual
        journals = app.state.journals = await stack.enter_async_context(
            Journals(
                settings.kafka,
                eventual=eventual,
                writes=False,
                consumer_pool=settings.consumer_pool,
                fold=settings.fold,
                origin=None,
                metrics=state.metrics,
            )
        )
        outcomes = journals.outcomes
        assert isinstance(outcomes, LocalOutcomes)  # a Journals with reads answers them itself
        app.state.outcomes = outcomes
        state.topics = journals.topics
        checks = {
            "kafka": kafka_check(journals.topics, settings.http.topic_prefix),
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
    state = ServiceState(settings)
    app = service_app(
        state,
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
        hot_endpoints=(outcomes.outcomes,),
        auth=settings.auth,
    )
    app.state.stream_slots = StreamSlots(settings.http.max_concurrent_streams, state.metrics)
    return app


def app_from_environment() -> FastAPI:
    """The app of one uvicorn worker process (`KJOURNAL_HTTP__WORKERS` > 1)."""
    return environment_app(Settings, create_app, "kjournal-reader")
