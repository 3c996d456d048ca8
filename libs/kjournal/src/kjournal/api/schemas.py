"""The HTTP API's request and response bodies (v1), shared by the services and the client.

Python names in code, camelCase on the wire (`seq_nr` ↔ `seqNr`). Requests refuse unknown fields,
so a typo is a 400 rather than a silently ignored field; responses ignore them, so an older client
keeps working against a newer service.

Only shape and types are checked here. What needs the domain (at least one event, increasing
seqNrs, base64 payloads, durations) is checked when a request becomes model values
(kjournal.api.convert), which raises the specific kjournal error.
"""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from functools import lru_cache
from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import BaseModel
from pydantic import BeforeValidator
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import PlainSerializer
from pydantic import StringConstraints
from pydantic.alias_generators import to_camel

from kjournal.model.action import RESERVED_HEADERS
from kjournal.model.expire_after import MAX_NANOS
from kjournal.model.seq_nr import SEQ_NR_MAX

__all__ = [
    "MAX_OUTCOME_QUESTIONS",
    "NDJSON_CONTENT_TYPE",
    "AppendEnvelope",
    "AppendOutcomeOut",
    "AppendRequest",
    "AppendResponse",
    "ConflictOut",
    "EventIn",
    "EventOut",
    "ExpiryOut",
    "FeedEntryOut",
    "JournalIdOut",
    "JournalStatusOut",
    "MarkRequest",
    "MarkResponse",
    "MetadataIn",
    "MetadataOut",
    "OutcomeLineOut",
    "OutcomeQuestionIn",
    "OutcomesRequest",
    "PartitionReplicationOut",
    "PayloadTypeName",
    "PointerOut",
    "PositionOut",
    "Problem",
    "ProblemFieldError",
    "ReadinessCheck",
    "ReadinessOut",
    "ReplicationOut",
    "StatusOut",
]

NDJSON_CONTENT_TYPE = "application/x-ndjson"
"""Streamed answers: one JSON document per line."""


@lru_cache(maxsize=1024)
def format_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a `Z`, as Kafka keeps timestamps.

    Memoized: every event of an append shares its record's timestamp, and a stream formats
    one per line. Equal datetimes are the same instant, so they format alike."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


Timestamp = Annotated[datetime, PlainSerializer(format_timestamp, return_type=str)]

PayloadTypeName = Literal["json", "text", "binary"]
EXACT_FLOAT_LIMIT = 2**53
"""From here on a JSON number with a fraction or exponent may have lost digits when parsed."""


def _whole_number(value: Any) -> Any:
    # JSON Schema (2020-12, OpenAPI 3.1) counts 7.0 as the integer 7; "7", true and 7.5 are not.
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT_FLOAT_LIMIT:
        return int(value)
    return value


# Integers as JSON Schema defines them: a number without a fractional part, read exactly (a
# string, a boolean, a fraction, or a float too large to be exact is refused).
SeqNrField = Annotated[
    int,
    Field(strict=True, ge=1, le=SEQ_NR_MAX, description="an integer, 1 ≤ seqNr ≤ 2^63-1"),
    BeforeValidator(_whole_number),
]
ExpireAfterMillis = Annotated[
    int, Field(strict=True, ge=1, le=MAX_NANOS // 1_000_000), BeforeValidator(_whole_number)
]
HeaderName = Annotated[str, StringConstraints(min_length=1)]
DURATION_PATTERN = (
    r"^[1-9][0-9]{0,4} ?(?:d|days?|h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?"
    r"|ms|millis?|milliseconds?)$"
)
ExpireAfterIn = (
    ExpireAfterMillis
    | Annotated[str, Field(json_schema_extra={"pattern": DURATION_PATTERN})]
    | None
)


class _CamelModel(BaseModel):
    """Frozen, with camelCase JSON names (the Python names are accepted too)."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True, frozen=True
    )


class RequestModel(_CamelModel):
    model_config = ConfigDict(extra="forbid")


class ResponseModel(_CamelModel):
    model_config = ConfigDict(extra="ignore")


# --- writer ------------------------------------------------------------------------------------


BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


def _payload_rules(payload_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "if": {"properties": {"payloadType": {"const": payload_type}}, "required": ["payloadType"]},
        "then": {"properties": {"payload": payload}, "required": ["payload"]},
    }


class EventIn(RequestModel):
    """One event to append. No `payload` (or `null`) means an event without a payload, and then
    no `payloadType` either."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _payload_rules("json", {"not": {"type": "null"}}),
                _payload_rules("text", {"type": "string"}),
                _payload_rules("binary", {"type": "string", "pattern": BASE64_PATTERN}),
            ]
        }
    )

    seq_nr: SeqNrField
    payload: JsonValue = Field(
        default=None,
        description="json: any JSON value; text: a string; binary: standard base64 (with padding)",
    )
    payload_type: PayloadTypeName | None = Field(
        default=None, description="json when absent; given only with a payload"
    )
    tags: list[str] = Field(default_factory=list)


class MetadataIn(RequestModel):
    """User metadata: `header` travels in the `journal.action` header, `payload` in the value."""

    header: JsonValue = None
    payload: JsonValue = None


class AppendEnvelope(RequestModel):
    """An append body's members besides its events."""

    metadata: MetadataIn | None = None
    expire_after: ExpireAfterIn = Field(
        default=None,
        description='how long after its last append the journal may be purged: "1 day", '
        '"30 minutes" (a positive Scala duration), or a positive number of milliseconds',
    )
    headers: dict[HeaderName, str] = Field(
        default_factory=dict,
        description="Kafka record headers (names not empty; "
        + ", ".join(sorted(RESERVED_HEADERS))
        + " are the journal's own: the action, and the trace context of tracing)",
        json_schema_extra={
            "propertyNames": {"minLength": 1, "not": {"enum": [*sorted(RESERVED_HEADERS)]}}
        },
    )


class AppendRequest(AppendEnvelope):
    """Events appended atomically (all or none): seqNrs strictly increasing, at least one."""

    events: list[EventIn] = Field(
        json_schema_extra={"minItems": 1},
        description="at least one; seqNrs strictly increasing (at most the writer's "
        "KJOURNAL_HTTP__MAX_EVENTS_PER_APPEND, 10 000 by default)",
    )


class AppendResponse(ResponseModel):
    """Where the append is: its record (201), or for a replay (200, `replay`: an identical
    append was already in the journal) the record of the copy readers return."""

    partition: int
    offset: int
    from_: int = Field(alias="from")
    to: int
    timestamp: Timestamp
    replay: bool = False
    seq_nr: int | None = Field(
        default=None, description="the journal's seqNr as of this append (also its ETag)"
    )


class AppendOutcomeOut(ResponseModel):
    """What the append rule made of the append at an offset (the reader answers the writer)."""

    outcome: Literal["taken", "replay", "refused", "conflict", "gap"]
    seq_nr: int = Field(
        description="taken: the journal's seqNr after it; else the seqNr it met (0: no journal)"
    )
    partition: int
    offset: int = Field(description="the append's own, or for a replay the copy's")
    timestamp: Timestamp
    expected: int | None = Field(default=None, description="the append's condition, if any")


MAX_OUTCOME_QUESTIONS = 1_000
"""Appends one request may ask the outcome of (`OutcomesRequest`)."""


class OutcomeQuestionIn(RequestModel):
    """One append of the topic whose outcome the writer asks, and its trace context."""

    id: str = Field(min_length=1, description="the journal's id")
    offset: Annotated[
        int,
        Field(strict=True, ge=0, le=2**63 - 1, description="the append's offset"),
        BeforeValidator(_whole_number),
    ]
    traceparent: str | None = Field(
        default=None, max_length=256, description="the append's W3C trace context, if traced"
    )
    tracestate: str | None = Field(default=None, max_length=512)


class OutcomesRequest(RequestModel):
    """The appends of one topic whose outcomes the writer asks in one request."""

    appends: list[OutcomeQuestionIn] = Field(min_length=1, max_length=MAX_OUTCOME_QUESTIONS)


class OutcomeLineOut(ResponseModel):
    """One line of the answer to an `OutcomesRequest`: the `i`th question's outcome, or the
    problem that kept it from being told. Lines come as outcomes are decided, in any order."""

    i: int = Field(description="the question's index in the request")
    outcome: AppendOutcomeOut | None = None
    problem: Problem | None = None


class PositionOut(ResponseModel):
    """Where the action's record landed in Kafka."""

    partition: int
    offset: int


class MarkRequest(RequestModel):
    id: str | None = Field(
        default=None, min_length=1, max_length=256, description="a random UUID if absent"
    )


class MarkResponse(ResponseModel):
    id: str
    partition: int
    offset: int


# --- reader ------------------------------------------------------------------------------------


class MetadataOut(ResponseModel):
    header: JsonValue = None
    payload: JsonValue = None


class EventOut(ResponseModel):
    """One line of an events stream."""

    seq_nr: int
    timestamp: Timestamp
    partition: int
    offset: int
    tags: list[str] = Field(default_factory=list)
    payload_type: PayloadTypeName | None = None
    payload: JsonValue = None
    metadata: MetadataOut = Field(default_factory=MetadataOut)
    expire_after: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    origin: str | None = None
    version: str | None = None


class PointerOut(ResponseModel):
    seq_nr: int


class ExpiryOut(ResponseModel):
    after: str
    on: date


class ConflictOut(ResponseModel):
    """A duplicate kept out of the journal because its content differed from the event kept."""

    seq_nr: int
    partition: int = Field(description="where the dropped duplicate was")
    offset: int
    kept_offset: int = Field(description="the offset of the event the journal keeps")
    detected_at: Timestamp


class JournalStatusOut(ResponseModel):
    """The journal's head as a read sees it now, and how much of it is still only in Kafka."""

    topic: str
    id: str
    seq_nr: int
    delete_to: int | None = None
    expiry: ExpiryOut | None = None
    partition: int
    end_offset: int
    pointer2: int | None = None
    unreplicated_actions: int = Field(description="this journal's actions not yet in Cassandra")
    unreplicated_offsets: int = Field(
        description="records of the journal's partition not yet replicated (all journals)"
    )
    unreplicated_duplicates: int = Field(
        default=0,
        description="of this journal's unreplicated appends, those that repeat seqNrs it already "
        "has (their repeated events are dropped; see docs/replication.md)",
    )
    conflicts: list[ConflictOut] | None = Field(
        default_factory=list,
        description="replicated duplicates whose content differed from the event kept (the "
        "first 20); null where the keyspace does not keep them (created by kafka-journal)",
    )
    quarantine_known: bool = Field(
        default=True,
        description="false where the keyspace has no quarantine table (created by kafka-journal)",
    )


class JournalIdOut(ResponseModel):
    """One line of a journal ids stream."""

    id: str


class FeedEntryOut(ResponseModel):
    """One line of a topic feed (docs/feed.md): an event of a journal (the members of EventOut,
    with `id` and `index`, its place in its append), a control entry (`delete` with `to`,
    `purge`, `quarantined` with `reason`: at `partition`/`offset`), `end`, the last line of a
    catch-up, or `heartbeat` (a live tail's, when nothing came for a while). `cursor`: pass it
    back as `after` to resume right after this line."""

    type: Literal["event", "delete", "purge", "quarantined", "end", "heartbeat"]
    cursor: str
    id: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp: Timestamp | None = None
    index: int | None = None
    seq_nr: int | None = None
    tags: list[str] | None = None
    payload_type: PayloadTypeName | None = None
    payload: JsonValue = None
    metadata: MetadataOut | None = None
    expire_after: str | None = None
    headers: dict[str, str] | None = None
    origin: str | None = None
    version: str | None = None
    to: int | None = None
    reason: str | None = None


class PartitionReplicationOut(ResponseModel):
    partition: int
    beginning_offset: int = Field(
        default=0, description="the oldest offset Kafka still holds (retention)"
    )
    end_offset: int = Field(description="the offset the next record will get")
    pointer2: int | None = Field(description="the last offset replicated; null if none yet")
    lag: int = Field(
        description="records Kafka holds that are not replicated yet: "
        "endOffset - max(pointer2 + 1, beginningOffset)"
    )


class ReplicationOut(ResponseModel):
    topic: str
    partitions: list[PartitionReplicationOut]
    lag: int


# --- both --------------------------------------------------------------------------------------


class StatusOut(ResponseModel):
    status: Literal["ok"] = "ok"


class ReadinessCheck(ResponseModel):
    ok: bool
    seconds: float
    detail: str | None = None


class ReadinessOut(ResponseModel):
    status: Literal["ready", "not ready"]
    checks: dict[str, ReadinessCheck]


class ProblemFieldError(ResponseModel):
    location: str = Field(description="body, query or path")
    field: str = Field(description='e.g. "events[0].seqNr" or "from"')
    pointer: str | None = Field(
        default=None, description='JSON pointer into the body: "#/events/0"'
    )
    detail: str


class Problem(BaseModel):
    """RFC 9457 problem details, plus members that depend on the type (`errors`, `offset`, ...)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None

    @property
    def extras(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
