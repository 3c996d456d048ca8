"""Liveness, readiness (Kafka metadata and a Cassandra query answer) and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from kjournal.api.readiness import check_readiness
from kjournal.errors import UnknownTopic

from kjournal_reader.deps import CassandraDep, MetricsDep, SettingsDep, TopicsDep
from kjournal_reader.schemas import ReadinessOut, StatusOut

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=StatusOut, summary="The process is up")
async def healthz() -> StatusOut:
    return StatusOut()


@router.get(
    "/readyz",
    response_model=ReadinessOut,
    responses={503: {"model": ReadinessOut, "description": "a dependency is not reachable"}},
    summary="Kafka answers a metadata request and Cassandra a query",
)
async def readyz(settings: SettingsDep, topics: TopicsDep, cassandra: CassandraDep) -> JSONResponse:
    probe = settings.http.topic_prefix or "journal"

    async def kafka() -> str:
        try:
            count = await topics.count(probe, refresh=True)
        except UnknownTopic:
            return f"metadata ok (no topic {probe})"
        return f"metadata ok ({probe}: {count} partitions)"

    report = await check_readiness(
        {"kafka": kafka, "cassandra": cassandra.probe}, settings.http.readiness_timeout_s
    )
    status = 200 if report.status == "ready" else 503
    return JSONResponse(report.model_dump(mode="json"), status_code=status)


@router.get("/metrics", include_in_schema=False)
async def metrics(sink: MetricsDep) -> Response:
    body, content_type = sink.exposition()
    return Response(body, media_type=content_type)
