"""Liveness, readiness (Kafka metadata answers, plus a service's own probes) and Prometheus
metrics: the same three routes in every service.

No `from __future__ import annotations` here: FastAPI resolves string annotations in the
module's globals, and `ProbesDep` is local to `health_router`.
"""

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import Annotated
from typing import Any

from fastapi import APIRouter
from fastapi import Depends
from fastapi.responses import JSONResponse
from fastapi.responses import Response
from kjournal.api.schemas import ReadinessOut
from kjournal.api.schemas import StatusOut
from kjournal.errors import UnknownTopic
from kjournal.kafka.topics import TopicPartitions

from kjournal_service.deps import HttpDep
from kjournal_service.deps import MetricsDep
from kjournal_service.deps import TopicsDep
from kjournal_service.readiness import Check
from kjournal_service.readiness import check_readiness

__all__ = ["Probes", "health_router", "kafka_check"]

# A dependency (it may take other dependencies) naming a service's checks besides Kafka's.
Probes = Callable[..., Awaitable[Mapping[str, Check]]]


async def _no_probes() -> Mapping[str, Check]:
    return {}


def kafka_check(topics: TopicPartitions, probe: str) -> Check:
    """Kafka answers a metadata request (for the topic `probe`, which need not exist)."""

    async def kafka() -> str:
        try:
            count = await topics.count(probe, refresh=True)
        except UnknownTopic:
            return f"metadata ok (no topic {probe})"
        return f"metadata ok ({probe}: {count} partitions)"

    return kafka


def health_router(readiness_summary: str, probes: Probes = _no_probes) -> APIRouter:
    """`/healthz`, `/readyz` (Kafka, then `probes`, each under the readiness timeout), `/metrics`."""
    router = APIRouter(tags=["health"])
    ProbesDep = Annotated[Mapping[str, Check], Depends(probes)]
    not_ready: dict[int | str, dict[str, Any]] = {
        503: {"model": ReadinessOut, "description": "a dependency is not reachable"}
    }

    @router.get("/healthz", response_model=StatusOut, summary="The process is up")
    async def healthz() -> StatusOut:
        return StatusOut()

    @router.get(
        "/readyz", response_model=ReadinessOut, responses=not_ready, summary=readiness_summary
    )
    async def readyz(http: HttpDep, topics: TopicsDep, others: ProbesDep) -> JSONResponse:
        kafka = kafka_check(topics, http.topic_prefix or "journal")
        report = await check_readiness({"kafka": kafka, **others}, http.readiness_timeout_s)
        status = 200 if report.status == "ready" else 503
        return JSONResponse(report.model_dump(mode="json"), status_code=status)

    @router.get("/metrics", include_in_schema=False)
    async def metrics(sink: MetricsDep) -> Response:
        body, content_type = sink.exposition()
        return Response(body, media_type=content_type)

    return router
