"""The metrics of a job that ends (expiry, check): handed on before the process exits.

A CronJob's process is gone before Prometheus would scrape it, so a run's metrics are pushed to a
Pushgateway (`pushgateway`), written in Prometheus' text format for a node exporter's textfile
collector (`metrics_file`), both, or neither (the log and the report say the same).
"""

from __future__ import annotations

from pathlib import Path

from kjournal_service.metrics_prometheus import PrometheusMetrics
from prometheus_client import push_to_gateway
from prometheus_client import write_to_textfile

__all__ = ["hand_on"]


def hand_on(
    metrics: PrometheusMetrics, job: str, metrics_file: Path | None, pushgateway: str | None
) -> None:
    if metrics_file is not None:
        write_to_textfile(str(metrics_file), metrics.registry)
    if pushgateway:
        push_to_gateway(pushgateway, job=job, registry=metrics.registry)
