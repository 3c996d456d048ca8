"""`LeanTracerProvider`: the SDK's tracer provider with a lighter span object.

The SDK's spans cost about 20 µs each to start and end on the dev box (bounded attribute maps
with locks, attribute cleaning, its own metrics hooks); the writer's whole append costs about
200 µs of CPU, and it makes two spans. `LeanSpan` keeps what the SDK span does that matters
here (sampling by the provider's sampler, its ids, limits of 128 attributes, events and links,
the status rules, exceptions as events) in plain lists and dicts, and at `end()` hands itself to
the provider's span processors as the `ReadableSpan` it also is. The processors, the exporters
and the provider's configuration (resource, sampler, `OTEL_*` variables, shutdown) are the SDK's.
"""

from __future__ import annotations

import random
import time
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import context as context_api
from opentelemetry import trace as trace_api
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import (
    Event,
    ReadableSpan,
    SpanProcessor,
    Tracer,
    TracerProvider,
)
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)
from opentelemetry.trace.propagation import _SPAN_KEY
from opentelemetry.util import types

__all__ = ["LeanSpan", "LeanTracer", "LeanTracerProvider", "enter", "leave"]

LIMIT = 128  # attributes, events and links per span: the SDK's defaults
_DEFAULT_SAMPLER = ParentBased(ALWAYS_ON).get_description()  # type: ignore[no-untyped-call]
_PLAIN = (str, bool, int, float)
_NO_STATE = TraceState()
_FLAGS = {
    (sampled, random): TraceFlags(
        (TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
        | (TraceFlags.RANDOM_TRACE_ID if random else 0)
    )
    for sampled in (False, True)
    for random in (False, True)
}
_PLAIN_TYPES = frozenset(_PLAIN)
_RANDOM = TraceFlags.RANDOM_TRACE_ID
_UNSET = Status(StatusCode.UNSET)
# Processors whose on_start does nothing (the SDK's own): not called at all.
_QUIET_STARTS = frozenset(
    {SpanProcessor.on_start, BatchSpanProcessor.on_start, SimpleSpanProcessor.on_start}
)


class _Origin:
    """What the spans of one tracer share, and where they go when they start and end: straight
    to the provider's processor when it has one alone (one call less per span, and none at the
    start for the processors that do nothing then), else to the provider's multi-processor.
    The provider routes its tracers' origins again whenever a processor is added."""

    __slots__ = ("__weakref__", "on_end", "on_start", "resource", "scope")

    def __init__(self, resource: Resource, scope: InstrumentationScope) -> None:
        self.resource = resource
        self.scope = scope
        self.on_start: Callable[..., None] | None = None
        self.on_end: Callable[[ReadableSpan], None] = _drop

    def route(self, processor: SpanProcessor) -> None:
        alone = getattr(processor, "_span_processors", None)
        if isinstance(alone, tuple) and len(alone) == 1:
            processor = alone[0]
        start = type(processor).on_start
        self.on_start = None if start in _QUIET_STARTS else processor.on_start
        self.on_end = processor.on_end


def _drop(span: ReadableSpan) -> None:
    """Where spans go before the provider has a processor."""


class LeanSpan(trace_api.Span, ReadableSpan):
    """A recording span; a `ReadableSpan` once ended (what processors and exporters read).

    Fields that are rarely set (events, links, dropped counts, status, the exception flags) start
    as class attributes, so that a span that sets none of them costs no more than its name, ids,
    times and attributes.
    """

    _events: Sequence[Event] = ()
    _links: Sequence[Link] = ()
    _dropped_attributes = 0
    _dropped_events = 0
    _dropped_links = 0
    _status = _UNSET
    _record_exception = True
    _set_status_on_exception = True
    _instrumentation_info = None
    _end_time: int | None = None

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        kind: SpanKind,
        origin: _Origin,
        attributes: types.Attributes,
        links: Sequence[Link],
        start_time: int,
    ) -> None:
        self._name = name
        self._context = self._span_context = context
        self._parent = parent
        self._kind = kind
        self._origin = origin
        self._start_time = start_time
        if (
            attributes
            and len(attributes) <= LIMIT
            and _PLAIN_TYPES.issuperset(map(type, attributes.values()))
        ):
            self._attributes: dict[str, types.AttributeValue] = dict(attributes)
        else:
            self._attributes = {}
            if attributes:
                self.set_attributes(attributes)
        if links:
            self._links = list(links[:LIMIT])
            self._dropped_links = max(0, len(links) - LIMIT)

    @property
    def resource(self) -> Resource:
        return self._origin.resource

    @property
    def instrumentation_scope(self) -> InstrumentationScope:
        return self._origin.scope

    # --- the API ---------------------------------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        return self._span_context

    def is_recording(self) -> bool:
        return self._end_time is None

    def set_attribute(self, key: str, value: types.AttributeValue) -> None:
        if self._end_time is not None:
            return
        if type(value) not in _PLAIN:
            cleaned = _cleaned(value)
            if cleaned is None:
                return
            value = cleaned
        attributes = self._attributes
        if len(attributes) >= LIMIT and key not in attributes:
            self._dropped_attributes += 1
            return
        attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, types.AttributeValue]) -> None:
        current = self._attributes
        if (
            self._end_time is None
            and len(current) + len(attributes) <= LIMIT
            and _PLAIN_TYPES.issuperset(map(type, attributes.values()))
        ):
            current.update(attributes)
            return
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def add_event(
        self, name: str, attributes: types.Attributes = None, timestamp: int | None = None
    ) -> None:
        if self._end_time is not None:
            return
        if len(self._events) >= LIMIT:
            self._dropped_events += 1
            return
        cleaned = {k: c for k, v in (attributes or {}).items() if (c := _cleaned(v)) is not None}
        if not self._events:
            self._events = []
        self._events.append(Event(name, cleaned, timestamp or time.time_ns()))  # type: ignore[attr-defined]

    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        if self._end_time is not None or not context.is_valid:
            return
        if len(self._links) >= LIMIT:
            self._dropped_links += 1
            return
        if not self._links:
            self._links = []
        self._links.append(Link(context, attributes))  # type: ignore[attr-defined]

    def update_name(self, name: str) -> None:
        if self._end_time is None:
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        # As the SDK: OK is final, UNSET changes nothing.
        if self._end_time is not None or self._status.status_code is StatusCode.OK:
            return
        if isinstance(status, StatusCode):
            status = Status(status, description)
        if status.status_code is not StatusCode.UNSET:
            self._status = status

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        kind = type(exception)
        module = kind.__module__
        recorded: dict[str, types.AttributeValue] = {
            "exception.type": (
                f"{module}.{kind.__qualname__}"
                if module and module != "builtins"
                else kind.__qualname__
            ),
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        recorded.update(attributes or {})
        self.add_event("exception", recorded, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._end_time is not None:
            return
        self._end_time = end_time or time.time_ns()
        self._origin.on_end(self)

    def __exit__(self, exc_type: Any, exc_val: BaseException | None, exc_tb: Any) -> None:
        if exc_val is not None and self._end_time is None:
            if self._record_exception:
                self.record_exception(exc_val, escaped=True)
            if self._set_status_on_exception:
                self.set_status(Status(StatusCode.ERROR, f"{type(exc_val).__name__}: {exc_val}"))
        self.end()

    # --- what processors read (ReadableSpan) ---------------------------------------------------

    @property
    def dropped_attributes(self) -> int:
        return self._dropped_attributes

    @property
    def dropped_events(self) -> int:
        return self._dropped_events

    @property
    def dropped_links(self) -> int:
        return self._dropped_links


def _cleaned(value: Any) -> types.AttributeValue | None:
    """A valid attribute value (a sequence of one plain type becomes a tuple), or None."""
    if type(value) in _PLAIN:
        return value  # type: ignore[no-any-return]
    if isinstance(value, list | tuple):
        kinds = {type(item) for item in value}
        if len(kinds) <= 1 and kinds <= _PLAIN_TYPES:
            return tuple(value)
    return None


# The current context, read and set directly when the API keeps it in a context variable (its
# default runtime context): the API's functions are three calls deep each.
_RUNTIME = context_api._RUNTIME_CONTEXT
_CURRENT: ContextVar[context_api.Context] | None = (
    _RUNTIME._current_context if isinstance(_RUNTIME, ContextVarsRuntimeContext) else None
)


def _parent_of(context: context_api.Context | None) -> SpanContext | None:
    """The valid span context of the span current in `context` (default: the current context)."""
    if context is None and _CURRENT is not None:
        found = _CURRENT.get().get(_SPAN_KEY)
    else:
        found = context_api.get_value(_SPAN_KEY, context)
    if found is None or not isinstance(found, trace_api.Span):
        return None
    parent = found.get_span_context()
    return parent if parent[5] else None


def enter(span: trace_api.Span, base: context_api.Context | None = None) -> Token[Any]:
    """Make `span` current (in `base`, default the current context) until `leave`; what
    `context.attach(trace.set_span_in_context(span, base))` does."""
    if _CURRENT is None:
        return context_api.attach(trace_api.set_span_in_context(span, base))
    if base is None:
        base = _CURRENT.get()
    return _CURRENT.set(context_api.Context({**base, _SPAN_KEY: span}))


def leave(token: Token[Any]) -> None:
    """Restore the context `enter` replaced."""
    if _CURRENT is None:
        context_api.detach(token)
    else:
        _CURRENT.reset(token)


class LeanTracer(trace_api.Tracer):
    """Starts `LeanSpan`s as the SDK's `Tracer` (whose settings it takes) starts its spans."""

    def __init__(self, sdk: Tracer, origin: _Origin) -> None:
        self._sampler: Sampler = sdk.sampler
        self._origin = origin
        self._ids: IdGenerator = sdk.id_generator
        self._random_ids = self._ids.is_trace_id_random()
        # The default generator's ids drawn here, without its calls (a zero is drawn again by it).
        self._bits = random.getrandbits if type(self._ids) is RandomIdGenerator else None
        self._root_flags = _FLAGS[True, self._random_ids]
        # The default sampler's decision, without its call: the parent's, or sampled for a root.
        self._parent_or_on = self._sampler.get_description() == _DEFAULT_SAMPLER

    def start_span(
        self,
        name: str,
        context: context_api.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace_api.Span:
        # A SpanContext is a tuple: trace id, span id, remote, flags, state, valid.
        parent = _parent_of(context)
        if self._parent_or_on:
            # The default sampler: the parent's decision, or sampled for a root.
            bits = self._bits
            if parent is None:
                trace_id = (bits and bits(128)) or self._ids.generate_trace_id()
                flags = self._root_flags
                trace_state = _NO_STATE
            else:
                trace_id, _, _, flags, trace_state, _ = parent
                flags = _FLAGS[bool(flags & TraceFlags.SAMPLED), bool(flags & _RANDOM)]
            # The ids are valid by construction: the tuple is made without SpanContext's checks.
            span_context: SpanContext = tuple.__new__(
                SpanContext,
                (
                    trace_id,
                    (bits and bits(64)) or self._ids.generate_span_id(),
                    False,
                    flags,
                    trace_state,
                    True,
                ),
            )
            if not flags & TraceFlags.SAMPLED:
                return trace_api.NonRecordingSpan(span_context)
            return self._begin(
                name, span_context, parent, kind, attributes, links or (), start_time, context,
                record_exception, set_status_on_exception,
            )  # fmt: skip
        links = links or ()
        if parent is not None:
            trace_id = parent[0]
            random_id = bool(parent[3] & _RANDOM)
        else:
            trace_id = self._ids.generate_trace_id()
            random_id = self._random_ids
        result = self._sampler.should_sample(context, trace_id, name, kind, attributes, links)
        record = result.decision.is_sampled()  # type: ignore[no-untyped-call]
        trace_state = result.trace_state or _NO_STATE
        if result.attributes:
            attributes = {**result.attributes, **(attributes or {})}
        if not result.decision.is_recording():  # type: ignore[no-untyped-call]
            return trace_api.NonRecordingSpan(
                SpanContext(
                    trace_id,
                    self._ids.generate_span_id(),
                    False,
                    _FLAGS[False, random_id],
                    trace_state,
                )
            )
        # The ids are valid by construction: the tuple is made without SpanContext's checks.
        sampled_context: SpanContext = tuple.__new__(
            SpanContext,
            (
                trace_id,
                self._ids.generate_span_id(),
                False,
                _FLAGS[record, random_id],
                trace_state,
                True,
            ),
        )
        if not record:
            # Recording an unsampled span (RECORD_ONLY) would feed no exporter: the batch
            # processor drops it.
            return trace_api.NonRecordingSpan(sampled_context)
        return self._begin(
            name, sampled_context, parent, kind, attributes, links, start_time, context,
            record_exception, set_status_on_exception,
        )  # fmt: skip

    def _begin(
        self,
        name: str,
        span_context: SpanContext,
        parent: SpanContext | None,
        kind: SpanKind,
        attributes: types.Attributes,
        links: Sequence[Link],
        start_time: int | None,
        context: context_api.Context | None,
        record_exception: bool,
        set_status_on_exception: bool,
    ) -> LeanSpan:
        """The sampled span, started: its processor's on_start has seen it."""
        span = LeanSpan(
            name, span_context, parent, kind, self._origin, attributes, links,
            start_time or time.time_ns(),
        )  # fmt: skip
        if not record_exception:
            span._record_exception = False
        if not set_status_on_exception:
            span._set_status_on_exception = False
        on_start = self._origin.on_start
        if on_start is not None:
            on_start(span, parent_context=context)
        return span

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: context_api.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[trace_api.Span]:
        span = self.start_span(
            name, context, kind, attributes, links, start_time, record_exception,
            set_status_on_exception,
        )  # fmt: skip
        with trace_api.use_span(
            span,
            end_on_exit=end_on_exit,
            record_exception=record_exception,
            set_status_on_exception=set_status_on_exception,
        ) as current:
            yield current


class LeanTracerProvider(TracerProvider):
    """The SDK's provider, whose tracers start `LeanSpan`s."""

    def _origins(self) -> weakref.WeakSet[_Origin]:
        """The origins of this provider's tracers (routed again when a processor is added)."""
        origins: weakref.WeakSet[_Origin] = self.__dict__.setdefault(
            "_lean_origins", weakref.WeakSet()
        )
        return origins

    def add_span_processor(self, span_processor: SpanProcessor) -> None:
        super().add_span_processor(span_processor)
        for origin in self._origins():
            origin.route(self._active_span_processor)

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: types.Attributes = None,
    ) -> trace_api.Tracer:
        sdk = super().get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )
        if not isinstance(sdk, Tracer):
            return sdk
        origin = _Origin(sdk.resource, sdk._instrumentation_scope)
        origin.route(self._active_span_processor)
        self._origins().add(origin)
        return LeanTracer(sdk, origin)
