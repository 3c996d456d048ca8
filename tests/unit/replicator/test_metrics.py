"""Executor metrics travel as snapshots and replay into the driver's Prometheus registry."""

from __future__ import annotations

import pickle

from kjournal.metrics import RecordingMetrics
from kjournal_replicator.metrics import MetricsSnapshot
from kjournal_replicator.metrics import driver_metrics


def test_a_snapshot_replays_what_was_recorded() -> None:
    recorded = RecordingMetrics()
    recorded.increment("kjournal_replicator_events_total", 3, topic="t")
    recorded.observe("kjournal_replicator_slice_seconds", 0.25, topic="t")
    recorded.observe("kjournal_replicator_slice_seconds", 0.5, topic="t")
    recorded.set("kjournal_replicator_pointer2_offset", 41, topic="t", partition="0")
    snapshot = pickle.loads(pickle.dumps(MetricsSnapshot.of(recorded)))

    replayed = RecordingMetrics()
    snapshot.replay(replayed)
    assert replayed.counters == recorded.counters
    assert replayed.histograms == recorded.histograms
    assert replayed.gauges == recorded.gauges

    metrics = driver_metrics()
    snapshot.replay(metrics)
    body, _ = metrics.exposition()
    text = body.decode()
    assert 'kjournal_replicator_events_total{topic="t"} 3.0' in text
    assert 'kjournal_replicator_pointer2_offset{partition="0",topic="t"} 41.0' in text
    assert 'kjournal_replicator_slice_seconds_bucket{le="300.0",topic="t"} 2.0' in text
