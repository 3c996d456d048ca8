"""JSON log lines carry the current span's trace_id and span_id, and only then."""

from __future__ import annotations

import json
import logging

from kjournal_service.logs import JsonFormatter
from opentelemetry import trace

from tests.unit.tracing.conftest import Spans


def _line() -> dict[str, object]:
    record = logging.LogRecord("kjournal", logging.INFO, __file__, 1, "appended %d", (3,), None)
    parsed: dict[str, object] = json.loads(JsonFormatter().format(record))
    return parsed


def test_a_line_inside_a_span_names_it(spans: Spans) -> None:
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("work") as span:
        line = _line()
    context = span.get_span_context()
    assert line["trace_id"] == f"{context.trace_id:032x}"
    assert line["span_id"] == f"{context.span_id:016x}"
    assert line["message"] == "appended 3"


def test_a_line_outside_spans_has_no_ids(spans: Spans) -> None:
    line = _line()
    assert "trace_id" not in line
    assert "span_id" not in line
