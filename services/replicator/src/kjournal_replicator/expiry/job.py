"""One run of the expiry job over its topics, and its metrics handed on when it ends
(run_metrics.py)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from datetime import datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path
from typing import Any

from kjournal.cassandra.session import connect
from kjournal.cassandra.snapshot import CassandraSnapshotReader
from kjournal.expiry import ExpiryReport
from kjournal.expiry import expire_topic
from kjournal_service.metrics_prometheus import PrometheusMetrics

from kjournal_replicator.expiry.log import KafkaExpiryLog
from kjournal_replicator.expiry.settings import ExpirySettings
from kjournal_replicator.run_metrics import hand_on

__all__ = ["ExpiryOptions", "report_json", "run_expiry", "today_in"]

log = logging.getLogger(__name__)

JOB = "kjournal-expiry"


@dataclass(frozen=True)
class ExpiryOptions:
    topics: Sequence[str]
    lookback_days: int
    max_purges: int
    dry_run: bool = False
    metrics_file: Path | None = None
    pushgateway: str | None = None


def _version() -> str:
    try:
        return f"kjournal-python/{version('kjournal')}"
    except PackageNotFoundError:
        return "kjournal-python/unknown"


def today_in(settings: ExpirySettings) -> date:
    """Today in the expiry time zone, the zone the replicator writes `expire_on` dates in."""
    return datetime.now(settings.cassandra.expiry_zone).date()


async def run_expiry(settings: ExpirySettings, options: ExpiryOptions) -> list[ExpiryReport]:
    metrics = PrometheusMetrics()
    today = today_in(settings)
    session = connect(settings.cassandra)
    try:
        store = CassandraSnapshotReader(
            session, settings.cassandra.names, java_version=settings.cassandra.java_version
        )
        reports = []
        async with KafkaExpiryLog(settings.kafka, _version()) as journal_log:
            for topic in options.topics:
                reports.append(
                    await expire_topic(
                        topic,
                        store,
                        journal_log,
                        today,
                        lookback_days=options.lookback_days,
                        max_purges=options.max_purges,
                        dry_run=options.dry_run,
                        metrics=metrics,
                    )
                )
    finally:
        session.cluster.shutdown()
    hand_on(metrics, JOB, options.metrics_file, options.pushgateway)
    return reports


def report_json(report: ExpiryReport) -> dict[str, Any]:
    return {
        "topic": report.topic,
        "today": report.today.isoformat(),
        "dryRun": report.dry_run,
        "expired": report.expired,
        "purged": [
            {"id": key.id}
            if at is None
            else {"id": key.id, "partition": at.partition, "offset": at.offset}
            for key, at in report.purged
        ],
        "skipped": {
            skip.value: sorted(key.id for key in keys) for skip, keys in report.skipped.items()
        },
        "deferred": sorted(key.id for key in report.deferred),
        "races": [
            {
                "id": race.key.id,
                "appendOffset": race.append.offset,
                "purgeOffset": race.purge.offset,
            }
            for race in report.races
        ],
    }


def dumps(reports: Sequence[ExpiryReport]) -> str:
    return json.dumps([report_json(report) for report in reports], indent=2)
