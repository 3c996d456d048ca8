"""One guard per performance shortcut of docs/performance.md, named after it.

Each shortcut trades some generality for speed. These tests fail when the code a shortcut relies
on changes underneath it (a new field, a new route, a new Python), so whoever changes it reads
docs/performance.md first.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import importlib.metadata
import importlib.util
import inspect
import sys
import zipimport
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import fast
from kjournal.read.settings import FoldSettings
from kjournal_reader.app import create_app as create_reader
from kjournal_reader.routes import journals as reader_journals
from kjournal_reader.routes import outcomes as reader_outcomes
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_replicator import kafka_source
from kjournal_replicator import spark
from kjournal_replicator import worker_gc
from kjournal_replicator import worker_store
from kjournal_replicator import zip_imports
from kjournal_replicator.settings import ApplySettings
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.settings import SparkSettings
from kjournal_service.app import service_app
from kjournal_service.state import ServiceState
from kjournal_writer import outcomes
from kjournal_writer.app import create_app as create_writer
from kjournal_writer.routes import journals as writer_routes
from kjournal_writer.settings import Settings as WriterSettings
from starlette.routing import Match

from tests.unit.services.fakes import FakeJournal
from tests.unit.services.fakes import FakeJournals
from tests.unit.services.fakes import reader_over

# Event.__post_init__ as reviewed for the events built past it (kjournal/model/fast.py: the row
# decoder, the JSON container, an append's events): it only checks the seqNr, which the
# journal query bounds to 1..head.seq_nr. Changed checks must be mirrored by the decoder (or the
# shortcut dropped) before this digest is updated.
REVIEWED_EVENT_CHECKS = "44510fa142111b06"


def _digest(function: Any) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


def test_shortcut_events_built_past_init_follow_event_and_event_record() -> None:
    assert tuple(f.name for f in dataclasses.fields(Event)) == fast.EVENT_FIELDS
    assert tuple(f.name for f in dataclasses.fields(EventRecord)) == fast.EVENT_RECORD_FIELDS
    assert _digest(Event.__post_init__) == REVIEWED_EVENT_CHECKS
    assert not hasattr(EventRecord, "__post_init__")


def test_shortcut_cassandra_returns_collections_and_uuids_as_text() -> None:
    cql = journal.select_cql(TableNames(keyspace="ks"))
    assert "CAST(meta_record_id AS text)" in cql
    assert "toJson(tags)" in cql
    assert "toJson(headers)" in cql


def _all_routes(routes: Any) -> list[Any]:
    """Routes of included routers too (FastAPI keeps an included router as one entry)."""
    flat = []
    for route in routes:
        included = getattr(route, "original_router", None)
        flat += _all_routes(included.routes) if included is not None else [route]
    return flat


def test_shortcut_hot_routes_serve_only_the_append_and_nothing_else_matches_it() -> None:
    routes = _all_routes(create_writer(WriterSettings()).routes)
    hot = [r for r in routes if isinstance(r, APIRoute) and r.endpoint is writer_routes.append]
    assert len(hot) == 1
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/journals/journal/some-id/events",
        "root_path": "",
    }
    assert len(routes) > 8
    others = [
        route for route in routes if route is not hot[0] and route.matches(scope)[0] is Match.FULL
    ]
    assert others == []  # HotRoutes is tried first: it must not shadow another route
    # ... and it passes on what is not its own (a DELETE of the same path is the router's).
    assert hot[0].matches({**scope, "method": "DELETE"})[0] is not Match.FULL


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/journals/journal/some-id/events"),
        ("GET", "/v1/journals/journal/some-id/pointer"),
        ("POST", "/v1/topics/journal/outcomes"),
    ],
)
def test_shortcut_the_readers_hot_routes_shadow_no_other_route(method: str, path: str) -> None:
    app = create_reader(ReaderSettings())
    routes = _all_routes(app.routes)
    hot_endpoints = {reader_journals.events, reader_journals.pointer, reader_outcomes.outcomes}
    scope = {"type": "http", "method": method, "path": path, "root_path": ""}
    matching = [route for route in routes if route.matches(scope)[0] is Match.FULL]
    assert len(matching) == 1
    assert isinstance(matching[0], APIRoute)
    assert matching[0].endpoint in hot_endpoints


@pytest.mark.anyio
@pytest.mark.parametrize(
    "query",
    ["", "?from=2", "?from=0", "?from=x", "?to=3&limit=1", "?limit=0", "?form=1", "?to=1&to=2"],
)
async def test_shortcut_a_hot_read_validates_its_query_as_fastapis_route_does(query: str) -> None:
    """The events route is served hot (its own query validation); with the hot routes switched
    off, FastAPI serves the same route: both answer alike."""
    journal = FakeJournal(Key("journal", "a"), [])
    answers = []
    for hot in (True, False):
        app = reader_over(FakeJournals(journal))
        if not hot:
            app.front = lambda inner: inner  # type: ignore[attr-defined]  # FastAPI's own routing
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://reader") as client:
            response = await client.get(f"/v1/journals/journal/a/events{query}")
        answers.append((response.status_code, response.text))
    assert answers[0] == answers[1]


@pytest.mark.anyio
async def test_shortcut_gc_freeze_after_start_up() -> None:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield

    app = service_app(
        ServiceState(WriterSettings()),
        service="writer",
        description="",
        lifespan=lifespan,
        routers=(),
        openapi_models=(),
    )
    gc.unfreeze()
    try:
        async with app.router.lifespan_context(app):
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.fixture
def _restore_zipimport() -> Iterator[None]:
    original = zipimport.zipimporter.invalidate_caches
    yield
    zipimport.zipimporter.invalidate_caches = original  # type: ignore[method-assign]
    zip_imports._original = None


@pytest.mark.usefixtures("_restore_zipimport")
def test_shortcut_zip_imports_patch_only_where_python_needs_it() -> None:
    before = zipimport.zipimporter.invalidate_caches
    zip_imports.install()
    patched = zipimport.zipimporter.invalidate_caches is not before
    assert patched == (sys.version_info < (3, 12))


@pytest.fixture
def _restore_gc_threshold() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("_restore_gc_threshold")
def test_shortcut_worker_gc_threshold_is_applied_by_each_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Session:
        cluster = type("Cluster", (), {"shutdown": staticmethod(lambda: None)})()

    monkeypatch.setattr(worker_store, "connect", lambda settings: Session())
    monkeypatch.setattr(worker_store, "CassandraReplicatedStore", lambda *args, **kwargs: object())
    worker_store.WorkerStore().get(
        ReplicatorSettings().cassandra, ApplySettings(gc_threshold=12_345)
    )
    assert gc.get_threshold()[0] == 12_345
    assert ApplySettings().gc_threshold == worker_gc.DEFAULT_THRESHOLD


def test_shortcut_local_jvm_c1_only() -> None:
    conf = spark.spark_conf(ReplicatorSettings(), "local[2]", [])
    assert spark.LOCAL_DRIVER_JAVA_OPTIONS in conf["spark.driver.extraJavaOptions"].split()
    cluster = spark.spark_conf(ReplicatorSettings(), "k8s://https://kubernetes.default.svc", [])
    assert spark.LOCAL_DRIVER_JAVA_OPTIONS not in cluster["spark.driver.extraJavaOptions"].split()


def test_shortcut_kafka_source_short_fetch_wait() -> None:
    options = kafka_source.source_options(KafkaSettings(), SparkSettings())
    assert options["kafka.fetch.max.wait.ms"] == str(kafka_source.FETCH_MAX_WAIT_MS)
    assert kafka_source.FETCH_MAX_WAIT_MS <= 50


def test_shortcut_producer_linger_zero() -> None:
    assert KafkaSettings().linger_ms == 0


def test_shortcut_folds_start_journals_the_listing_shows_cannot_exist() -> None:
    """On by default; what makes it exact is in test_partition_fold.py's listing tests and
    tests/integration/services/test_known_journals.py."""
    assert FoldSettings().list_journals


def test_shortcut_writer_asks_the_reader_over_aiohttp() -> None:
    source = inspect.getsource(outcomes)
    assert "import aiohttp" in source
    assert "import httpx" not in source


def test_shortcut_sniffio_installed_for_httpcore() -> None:
    # httpcore imports sniffio on every async request; a missing one is retried every time
    assert importlib.util.find_spec("sniffio") is not None
    assert "sniffio" in " ".join(importlib.metadata.requires("kjournal") or [])
