"""`LinkedSampling`: the configured sampler decides, except that a span linked to a sampled span
is sampled (the replicator's slice span keeps a sampled append's replication)."""

from __future__ import annotations

from kjournal.telemetry import LinkedSampling
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.sdk.trace.sampling import ParentBased
from opentelemetry.trace import Link
from opentelemetry.trace import SpanContext
from opentelemetry.trace import TraceFlags


def _link(sampled: bool) -> Link:
    flags = TraceFlags(TraceFlags.SAMPLED if sampled else 0)
    return Link(SpanContext(1, 2, is_remote=True, trace_flags=flags))


def _decision(sampler: LinkedSampling, links: list[Link]) -> Decision:
    return sampler.should_sample(None, 0x1234, "process journal", links=links).decision


def test_the_configured_sampler_decides_without_a_sampled_link() -> None:
    never = LinkedSampling(ParentBased(ALWAYS_OFF))
    assert _decision(never, []) is Decision.DROP
    assert _decision(never, [_link(False), _link(False)]) is Decision.DROP
    assert _decision(LinkedSampling(ALWAYS_ON), []) is Decision.RECORD_AND_SAMPLE


def test_a_link_to_a_sampled_span_samples() -> None:
    never = LinkedSampling(ParentBased(ALWAYS_OFF))
    assert _decision(never, [_link(False), _link(True)]) is Decision.RECORD_AND_SAMPLE
    assert "ParentBased" in never.get_description()
