"""Every metric is declared once, in kjournal/metrics/catalogue.py; its docs table and the
Prometheus adapter follow the declaration."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from kjournal.metrics.catalogue import CATALOGUE
from kjournal.metrics.catalogue import Kind
from kjournal.metrics.catalogue import Metric
from kjournal_dev.generate import metrics_docs
from kjournal_service.metrics_prometheus import PrometheusMetrics

ROOT = Path(__file__).parents[3]
_NAME = re.compile(r"kjournal_[a-z0-9_]+")
_LABEL = re.compile(r"[a-z_][a-z0-9_]*")


def test_the_docs_table_is_what_the_catalogue_generates():
    assert metrics_docs.check() is None


def test_a_stale_docs_table_is_named(tmp_path: Path):
    stale = tmp_path / "observability.md"
    current = metrics_docs.docs_path().read_text()
    stale.write_text(current.replace("| requests answered, by route template |", "| old |"))
    assert "metric table is out of date" in str(metrics_docs.check(stale))


@pytest.mark.parametrize("metric", CATALOGUE.values(), ids=lambda metric: metric.name)
def test_each_declaration_follows_the_prometheus_conventions(metric: Metric):
    assert _NAME.fullmatch(metric.name)
    assert metric.help
    assert all(_LABEL.fullmatch(label) for label in metric.labels)
    assert len(set(metric.labels)) == len(metric.labels)
    assert set(metric.values) <= set(metric.labels)
    if metric.kind is Kind.COUNTER:
        assert metric.name.endswith("_total")
    if metric.kind is Kind.HISTOGRAM:
        assert metric.name.endswith("_seconds")
        assert metric.unit == "s"


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_no_metric_name_is_spelled_outside_the_catalogue():
    catalogue = ROOT / "libs/kjournal/src/kjournal/metrics/catalogue.py"
    sources = [
        path
        for pattern in ("libs/*/src/**/*.py", "services/*/src/**/*.py", "bench/**/*.py")
        for path in ROOT.glob(pattern)
        if path != catalogue
    ]
    spelled = {
        f"{path.relative_to(ROOT)}: {text}"
        for path in sources
        for text in _string_constants(path)
        if text in CATALOGUE
    }
    assert spelled == set()


def test_the_prometheus_adapter_takes_help_and_labels_from_the_declaration(
    caplog: pytest.LogCaptureFixture,
):
    metrics = PrometheusMetrics()
    metrics.increment("kjournal_writer_events_total", 2, topic="journal")
    metrics.increment("kjournal_writer_events_total", 1, partition="1")  # not its labels
    metrics.set("kjournal_writer_events_total", 1, topic="journal")  # not its kind
    text = metrics.exposition()[0].decode()
    assert "# HELP kjournal_writer_events_total events appended (acknowledged by Kafka)" in text
    assert 'kjournal_writer_events_total{topic="journal"} 2.0' in text
    assert "partition" not in text
    assert len([r for r in caplog.records if "kjournal_writer_events_total" in r.message]) == 2


def test_a_declared_metric_first_called_with_other_labels_is_dropped(
    caplog: pytest.LogCaptureFixture,
):
    metrics = PrometheusMetrics()
    metrics.increment("kjournal_writer_events_total", 1, partition="1")
    metrics.increment("kjournal_writer_events_total", 1, topic="journal")
    text = metrics.exposition()[0].decode()
    assert 'kjournal_writer_events_total{topic="journal"} 1.0' in text
    assert "partition" not in text
    assert any("dropping a Counter with labels ('partition',)" in r.message for r in caplog.records)
