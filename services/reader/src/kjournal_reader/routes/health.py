"""Liveness, readiness (Kafka metadata and a Cassandra query answer) and Prometheus metrics."""

from __future__ import annotations

from kjournal_service.health import health_router
from kjournal_service.readiness import Check

from kjournal_reader.deps import CassandraDep


async def _cassandra(cassandra: CassandraDep) -> dict[str, Check]:
    return {"cassandra": cassandra.probe}


router = health_router("Kafka answers a metadata request and Cassandra a query", _cassandra)
