"""`OtlpHttpSpanExporter`: the SDK's OTLP/HTTP (protobuf) span exporter with our encoder.

Everything but the encoding is the SDK's: endpoint, headers, timeout, compression and TLS from
the standard `OTEL_EXPORTER_OTLP_*` variables, retries with backoff, and its own metrics. Only
`export` is replaced, to serialise with `otlp_encoding.encode_spans` (the same bytes, a few
times cheaper); it keeps to the parent's steps, which use its private `_client` and
`_metrics` (the version is pinned by uv.lock; a unit test sends through it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from kjournal_service.tracing.otlp_encoding import encode_spans

__all__ = ["OtlpHttpSpanExporter"]

log = logging.getLogger(__name__)


class OtlpHttpSpanExporter(OTLPSpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        with self._metrics.export_operation(len(spans)) as result:
            try:
                data = encode_spans(spans)
            except Exception as exc:  # a span the encoder cannot write: drop the batch, say so
                log.error("could not encode %d spans: %s", len(spans), exc)
                result.error = exc
                return SpanExportResult.FAILURE
            sent = self._client.export(data)
            if not sent.success:
                result.error = sent.error
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    @property
    def endpoint(self) -> str:
        return str(self._endpoint)
