"""OTLP/protobuf encoding of finished spans, written by hand for speed.

The SDK's encoder builds a protobuf object per span, attribute and value before serialising them:
about 40 µs a span on the dev box, which the export thread takes from the service under the
interpreter lock. This writes the same `ExportTraceServiceRequest` bytes directly (the unit tests
parse both and compare them), caching what repeats: each attribute key, small attribute values,
each resource and scope.

Wire format: https://protobuf.dev/programming-guides/encoding/ ; the messages are those of
opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, Status

from kjournal_service.tracing.lean import _NO_STATE, _UNSET, LeanSpan, _Origin

__all__ = ["encode_spans"]

_HAS_IS_REMOTE = 0x100  # SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
_IS_REMOTE = 0x200  # SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
_SMALL = [bytes((n,)) for n in range(128)]
_DOUBLE = struct.Struct("<d")
_CACHE_LIMIT = 4096


def _varint(value: int) -> bytes:
    if value < 0x80:
        if value >= 0:
            return _SMALL[value]
        value += 1 << 64  # int64 as two's complement: ten bytes
    elif value < 0x4000:
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    elif value < 0x200000:
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + _varint(len(payload)) + payload


def _text(tag: bytes, text: str) -> bytes:
    return _field(tag, text.encode("utf-8"))


# --- attributes: KeyValue { key = 1; AnyValue value = 2 } ------------------------------------

_keys: dict[str, bytes] = {}
_pairs: dict[tuple[str, Any, type], bytes] = {}


def _any_value(value: Any) -> bytes:
    """AnyValue { string 1; bool 2; int64 3; double 4; ArrayValue 5; KeyValueList 6; bytes 7 }"""
    if isinstance(value, str):
        return _text(b"\x0a", value)
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        return b"\x18" + _varint(value)
    if isinstance(value, float):
        return b"\x21" + _DOUBLE.pack(value)
    if value is None:
        return b""
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if isinstance(value, Sequence):
        return _field(b"\x2a", b"".join(_field(b"\x0a", _any_value(v)) for v in value))
    if isinstance(value, Mapping):
        pairs = b"".join(_field(b"\x0a", _key_value(str(k), v)) for k, v in value.items())
        return _field(b"\x32", pairs)
    raise TypeError(f"attribute value of type {type(value).__name__}")


def _key_value(key: str, value: Any) -> bytes:
    prefix = _keys.get(key)
    if prefix is None:
        prefix = _keys[key] = _text(b"\x0a", key)
    return prefix + _field(b"\x12", _any_value(value))


def _attributes(tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
    """Each attribute as a field `tag` (a KeyValue); short (key, value) pairs are cached."""
    if not attributes:
        return b""
    out: list[bytes] = []
    for key, value in attributes.items():
        kind = type(value)
        if kind is str or kind is int or kind is bool:
            # the kind is in the key: True and 1 are equal
            cached = _pairs.get((key, value, kind))
            out += (tag, cached if cached is not None else _pair(key, value, kind))
        else:
            out.append(_field(tag, _key_value(key, value)))
    return b"".join(out)


# --- spans -----------------------------------------------------------------------------------

_KINDS = [b"\x30" + _varint(kind + 1) for kind in range(5)]  # SpanKind.INTERNAL (0) is 1
_LOCAL = _HAS_IS_REMOTE.to_bytes(4, "little")
_REMOTE = (_HAS_IS_REMOTE | _IS_REMOTE).to_bytes(4, "little")
_UNSET_STATUS = b"\x7a\x00"
_names: dict[str, bytes] = {}


def _flags(parent: SpanContext | None) -> bytes:
    return _REMOTE if parent is not None and parent.is_remote else _LOCAL


def _name(name: str) -> bytes:
    encoded = _names.get(name)
    if encoded is None:
        encoded = _text(b"\x2a", name)
        if len(_names) < _CACHE_LIMIT:
            _names[name] = encoded
    return encoded


def _span(span: ReadableSpan) -> bytes:
    """Span { trace_id 1; span_id 2; trace_state 3; parent_span_id 4; name 5; kind 6;
    start 7; end 8; attributes 9; dropped_attributes 10; events 11; dropped_events 12;
    links 13; dropped_links 14; status 15; flags 16 }

    The hot loop of exporting: it reads the span's fields directly (its properties copy the
    attributes, events and links each time) and keeps the common case short.
    """
    context = span._context
    assert context is not None
    parent = span._parent
    parts = [
        b"\x0a\x10",
        context.trace_id.to_bytes(16, "big"),
        b"\x12\x08",
        context.span_id.to_bytes(8, "big"),
    ]
    if context.trace_state:
        parts.append(_text(b"\x1a", ",".join(f"{k}={v}" for k, v in context.trace_state.items())))
    if parent is not None:
        parts += (b"\x22\x08", parent.span_id.to_bytes(8, "big"))
    name = span._name
    if name:
        encoded_name = _names.get(name)
        parts.append(encoded_name if encoded_name is not None else _name(name))
    parts.append(_KINDS[span._kind._value_])
    if span._start_time:
        parts += (b"\x39", span._start_time.to_bytes(8, "little"))
    if span._end_time:
        parts += (b"\x41", span._end_time.to_bytes(8, "little"))
    attributes = span._attributes
    if attributes:
        pairs = _pairs
        for key, value in attributes.items():
            kind = type(value)
            if kind is str or kind is int or kind is bool:
                cached = pairs.get((key, value, kind))
                parts += (b"\x4a", cached if cached is not None else _pair(key, value, kind))
            else:
                parts.append(_field(b"\x4a", _key_value(key, value)))
    dropped = span.dropped_attributes
    if dropped:
        parts += (b"\x50", _varint(dropped))
    if span._events:
        parts += [_event(event) for event in span._events]
    dropped = span.dropped_events
    if dropped:
        parts += (b"\x60", _varint(dropped))
    if span._links:
        parts += [_link(link) for link in span._links]
    dropped = span.dropped_links
    if dropped:
        parts += (b"\x70", _varint(dropped))
    status = span._status
    is_unset = status.is_unset and not status.description
    parts.append(_UNSET_STATUS if is_unset else _status_field(status))
    parts += (b"\x85\x01", _REMOTE if parent is not None and parent.is_remote else _LOCAL)
    return b"".join(parts)


def _pair(key: str, value: Any, kind: type) -> bytes:
    """A short (key, value) pair's KeyValue, length-prefixed, cached for its next use."""
    encoded = _field(b"", _key_value(key, value))
    if len(encoded) < 64:
        if len(_pairs) >= _CACHE_LIMIT:
            _pairs.clear()
        _pairs[(key, value, kind)] = encoded
    return encoded


def _event(event: Event) -> bytes:
    """Event { time_unix_nano 1; name 2; attributes 3; dropped_attributes_count 4 }"""
    body = b"\x09" + event.timestamp.to_bytes(8, "little") if event.timestamp else b""
    if event.name:
        body += _text(b"\x12", event.name)
    body += _attributes(b"\x1a", event.attributes)
    if event.dropped_attributes:
        body += b"\x20" + _varint(event.dropped_attributes)
    return _field(b"\x5a", body)


def _link(link: Link) -> bytes:
    """Link { trace_id 1; span_id 2; attributes 4; dropped_attributes_count 5; flags 6 }"""
    linked = link.context
    body = (
        b"\x0a\x10"
        + linked.trace_id.to_bytes(16, "big")
        + b"\x12\x08"
        + linked.span_id.to_bytes(8, "big")
        + _attributes(b"\x22", link.attributes)
    )
    if link.dropped_attributes:
        body += b"\x28" + _varint(link.dropped_attributes)
    return _field(b"\x6a", body + b"\x35" + _flags(linked))


# --- the lean spans of kjournal's own tracer: the common case, shorter still ------------------

# (key, value) → the span's attribute field, tag first. Keyed by the item itself, in two caches:
# one of text alone, looked up first whatever the value (text never equals a value of another
# type), one of integers, looked up only for an int (True == 1 == 1.0: the type is checked first).
_texts: dict[tuple[str, Any], bytes] = {}
_integers: dict[tuple[str, Any], bytes] = {}
_SPAN_ATTRIBUTE = b"\x4a"


def _attribute_field(item: tuple[str, Any]) -> bytes:
    """A span attribute field (tag, length, KeyValue), cached when the value is short text or a
    small integer (offsets and seqNrs, unique, are not)."""
    key, value = item
    kind = type(value)
    cache: dict[tuple[str, Any], bytes] | None = None
    if kind is int:
        known = _integers.get(item)
        if known is not None:
            return known
        prefix = _keys.get(key)
        if prefix is None:
            prefix = _keys[key] = _text(b"\x0a", key)
        number = _varint(value)
        pair = prefix + b"\x12" + _SMALL[len(number) + 1] + b"\x18" + number
        encoded = _field(_SPAN_ATTRIBUTE, pair)
        if 0 <= value < 0x10000:
            cache = _integers
    else:
        encoded = _field(_SPAN_ATTRIBUTE, _key_value(key, value))
        if kind is str and len(encoded) < 96:
            cache = _texts
    if cache is not None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[item] = encoded
    return encoded


def _lean_span(span: LeanSpan) -> bytes:
    """`_span` of a LeanSpan, framed as field 2 of ScopeSpans: its fields are read directly, and
    what it rarely has (events, links, drops, a status, a trace state) is checked once."""
    trace_id, span_id, _, _, trace_state, _ = span._span_context
    parent = span._parent
    name = span._name
    parts = [
        b"\x0a\x10",
        trace_id.to_bytes(16, "big"),
        b"\x12\x08",
        span_id.to_bytes(8, "big"),
    ]
    if trace_state is not _NO_STATE and trace_state:
        parts.append(_text(b"\x1a", trace_state.to_header()))
    if parent is not None:
        parts += (b"\x22\x08", parent[1].to_bytes(8, "big"))
    if name:
        encoded_name = _names.get(name)
        parts.append(encoded_name if encoded_name is not None else _name(name))
    parts += (
        _KINDS[span._kind._value_],
        b"\x39",
        (span._start_time or 0).to_bytes(8, "little"),
        b"\x41",
        (span._end_time or 0).to_bytes(8, "little"),
    )
    cached = _texts.get
    for item in span._attributes.items():
        field = cached(item)
        parts.append(field if field is not None else _attribute_field(item))
    if span._dropped_attributes or span._events or span._links or span._dropped_links:
        parts.append(_rare(span))
    status = span._status
    parts.append(_UNSET_STATUS if status is _UNSET else _status_field(status))
    parts += (b"\x85\x01", _REMOTE if parent is not None and parent[2] else _LOCAL)
    return _field(b"\x12", b"".join(parts))


def _rare(span: LeanSpan) -> bytes:
    """Dropped attributes, events, dropped events, links, dropped links (fields 10 to 14)."""
    parts: list[bytes] = []
    if span._dropped_attributes:
        parts += (b"\x50", _varint(span._dropped_attributes))
    parts += [_event(event) for event in span._events]
    if span._dropped_events:
        parts += (b"\x60", _varint(span._dropped_events))
    parts += [_link(link) for link in span._links]
    if span._dropped_links:
        parts += (b"\x70", _varint(span._dropped_links))
    return b"".join(parts)


# --- resources and scopes --------------------------------------------------------------------

_resources: dict[int, tuple[Resource, bytes]] = {}  # by id(): a process has one or two
_scopes: dict[int, tuple[InstrumentationScope | None, bytes]] = {}


def _resource(resource: Resource) -> bytes:
    """Resource { attributes 1; dropped_attributes_count 2 }, as field 1 of ResourceSpans."""
    cached = _resources.get(id(resource))
    if cached is None or cached[0] is not resource:
        encoded = _field(b"\x0a", _attributes(b"\x0a", resource.attributes))
        cached = _resources[id(resource)] = (resource, encoded)
    return cached[1]


def _scope(scope: InstrumentationScope | None) -> bytes:
    """InstrumentationScope { name 1; version 2; attributes 3 }, as field 1 of ScopeSpans."""
    cached = _scopes.get(id(scope))
    if cached is None or cached[0] is not scope:
        body = b""
        if scope is not None:
            if scope.name:
                body += _text(b"\x0a", scope.name)
            if scope.version:
                body += _text(b"\x12", scope.version)
            body += _attributes(b"\x1a", scope.attributes)
        cached = _scopes[id(scope)] = (scope, _field(b"\x0a", body))
    return cached[1]


_canonical: dict[int, tuple[Resource, Resource]] = {}  # id → (resource, an equal one seen first)


def _group_of(resource: Resource) -> Resource:
    """The first resource seen equal to `resource`: the SDK groups spans by equal resources, and
    comparing (or hashing) a Resource serialises its attributes each time, so once per object."""
    known = _canonical.get(id(resource))
    if known is not None and known[0] is resource:
        return known[1]
    group = next((g for r, g in _canonical.values() if r == resource), resource)
    if len(_canonical) < _CACHE_LIMIT:
        _canonical[id(resource)] = (resource, group)  # keeps it alive: its id stays its own
    return group


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialised `ExportTraceServiceRequest` of `spans`, grouped by resource and scope."""
    grouped: dict[int, tuple[Resource, dict[InstrumentationScope | None, list[bytes]]]] = {}
    lean: dict[_Origin, list[bytes]] = {}  # a LeanSpan's list, by its tracer's origin
    for span in spans:
        if type(span) is LeanSpan:
            of_origin = lean.get(span._origin)
            if of_origin is None:
                origin = span._origin
                of_origin = lean[origin] = _scoped(grouped, origin.resource, origin.scope)
            of_origin.append(_lean_span(span))
        else:
            _scoped(grouped, span.resource, span.instrumentation_scope).append(
                _field(b"\x12", _span(span))
            )
    # One join at the end: each message's length is summed from its parts, so the request (a
    # few hundred kilobytes) is written once, not copied again at each level of nesting.
    out: list[bytes] = []
    for resource, scopes in grouped.values():
        parts = [_resource(resource)]
        for scope, fields in scopes.items():
            head = _scope(scope)
            tail = (
                _text(b"\x1a", scope.schema_url) if scope is not None and scope.schema_url else b""
            )
            parts += (b"\x12", _varint(len(head) + sum(map(len, fields)) + len(tail)), head)
            parts += fields
            parts.append(tail)
        if resource.schema_url:
            parts.append(_text(b"\x1a", resource.schema_url))
        out += (b"\x0a", _varint(sum(map(len, parts))))
        out += parts
    return b"".join(out)


def _scoped(
    grouped: dict[int, tuple[Resource, dict[InstrumentationScope | None, list[bytes]]]],
    resource: Resource,
    scope: InstrumentationScope | None,
) -> list[bytes]:
    """The list of encoded spans of `resource` (or an equal one) and `scope` in `grouped`."""
    resource = _group_of(resource)
    entry = grouped.get(id(resource))
    if entry is None:
        entry = grouped[id(resource)] = (resource, {})
    scope = scope or None  # hashed by name and version: cheap
    scoped = entry[1].get(scope)
    if scoped is None:
        scoped = entry[1][scope] = []
    return scoped


def _status_field(status: Status) -> bytes:
    """A span's status other than the plain unset one."""
    body = _text(b"\x12", status.description) if status.description else b""
    if status.status_code.value:
        body += b"\x18" + _varint(status.status_code.value)
    return _field(b"\x7a", body)
