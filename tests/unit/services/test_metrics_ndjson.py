"""PrometheusMetrics (the Metrics protocol on prometheus-client) and NDJSON chunking."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from kjournal.errors import KafkaUnavailable
from kjournal.metrics import Metrics
from kjournal_service.metrics_prometheus import PrometheusMetrics
from kjournal_service.ndjson import first_chunk
from kjournal_service.ndjson import ndjson_chunks
from kjournal_service.ndjson import prefetch


def test_counters_histograms_and_gauges_are_exposed():
    metrics = PrometheusMetrics()
    sink: Metrics = metrics  # the protocol
    sink.increment("kjournal_test_events_total", 3, topic="journal")
    sink.increment("kjournal_test_events_total", topic="journal")
    sink.observe("kjournal_test_seconds", 0.02, op="append")
    sink.set("kjournal_test_lag", 7, partition="1")
    sink.increment("kjournal_test_plain_total")
    body, content_type = metrics.exposition()
    text = body.decode()
    assert content_type.startswith("text/plain")
    assert 'kjournal_test_events_total{topic="journal"} 4.0' in text
    assert 'kjournal_test_seconds_bucket{le="0.025",op="append"} 1.0' in text
    assert 'kjournal_test_lag{partition="1"} 7.0' in text
    assert "kjournal_test_plain_total 1.0" in text


def test_a_metric_reused_with_other_labels_is_dropped_not_raised(caplog: pytest.LogCaptureFixture):
    metrics = PrometheusMetrics()
    metrics.increment("kjournal_test_total", topic="a")
    metrics.increment("kjournal_test_total", other="b")
    metrics.increment("kjournal_test_total", other="b")
    metrics.observe("kjournal_test_total", 1.0, topic="a")
    assert 'kjournal_test_total{topic="a"} 1.0' in metrics.exposition()[0].decode()
    assert len([r for r in caplog.records if "dropping" in r.getMessage()]) == 2


async def _items(count: int, fail: bool = False) -> AsyncIterator[int]:
    for n in range(count):
        yield n
    if fail:
        raise KafkaUnavailable("lost")


async def _collect(chunks: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in chunks]


def test_lines_are_sent_in_chunks():
    chunks = asyncio.run(
        _collect(ndjson_chunks(_items(100), lambda n: {"n": n}, 64, lambda exc: {}))
    )
    assert all(len(chunk) >= 64 for chunk in chunks[:-1])
    lines = b"".join(chunks).decode().splitlines()
    assert [json.loads(line)["n"] for line in lines] == list(range(100))


def test_an_error_ends_the_stream_with_a_problem_line():
    chunks = asyncio.run(
        _collect(ndjson_chunks(_items(3, fail=True), str, 1000, lambda exc: {"detail": str(exc)}))
    )
    lines = b"".join(chunks).decode().splitlines()
    assert lines == ['"0"', '"1"', '"2"', '{"problem":{"detail":"lost"}}']


class _FailsToClose:
    """Two items, then an error while the source is being closed (a driver's cleanup)."""

    def __init__(self) -> None:
        self.items = iter(range(2))

    def __aiter__(self) -> _FailsToClose:
        return self

    async def __anext__(self) -> int:
        item = next(self.items, None)
        if item is None:
            raise StopAsyncIteration
        return item

    async def aclose(self) -> None:
        raise RuntimeError("cleanup failed")


def test_an_error_closing_the_source_still_ends_the_stream_with_a_problem_line():
    chunks = asyncio.run(
        _collect(ndjson_chunks(_FailsToClose(), str, 1, lambda exc: {"detail": str(exc)}))
    )
    lines = b"".join(chunks).decode().splitlines()
    assert lines == ['"0"', '"1"', '{"problem":{"detail":"cleanup failed"}}']


def test_prefetch_surfaces_errors_before_the_stream_starts():
    async def run() -> None:
        with pytest.raises(KafkaUnavailable):
            await prefetch(_items(0, fail=True))
        empty = await prefetch(_items(0))
        assert [n async for n in empty] == []
        some = await prefetch(_items(3))
        assert [n async for n in some] == [0, 1, 2]

    asyncio.run(run())


def test_a_first_chunk_holds_a_short_answer_whole_and_a_long_one_streams_on():
    async def run() -> None:
        whole = await first_chunk(_items(3), lambda n: {"n": n}, 1000)
        assert whole.rest is None
        assert whole.count == 3
        assert [json.loads(line)["n"] for line in whole.lines.decode().splitlines()] == [0, 1, 2]

        started = await first_chunk(_items(100), lambda n: {"n": n}, 64)
        assert started.rest is not None
        assert 64 <= len(started.lines) < 64 + 16
        chunks = await _collect(
            ndjson_chunks(started.rest, lambda n: {"n": n}, 64, lambda exc: {}, first=started)
        )
        assert chunks[0] == bytes(started.lines)  # sent first, before any further item
        lines = b"".join(chunks).decode().splitlines()
        assert [json.loads(line)["n"] for line in lines] == list(range(100))

        with pytest.raises(KafkaUnavailable):  # nothing sent yet: a problem answer, not a line
            await first_chunk(_items(3, fail=True), str, 1000)

    asyncio.run(run())
