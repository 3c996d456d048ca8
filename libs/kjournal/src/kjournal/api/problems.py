"""kjournal errors ↔ `application/problem+json` (RFC 9457), as data both ways.

The services turn an error into a problem with `problem_for_error` (kjournal_service renders it);
the client turns a problem body back into the same error class with `error_for_problem`. `ERROR_PROBLEMS` is the table, most specific class
first; `type` is `urn:kjournal:problem:<slug>`, `title` is fixed per type, `detail` is the error's
message, and the listed attributes of the error become extra members (camelCase).

Choices: an unknown topic is 404 (the request is well-formed; the topic it names does not
exist), distinct from `journal-not-found`; a quarantined journal is 500 and names the offset an
operator must look at; Unavailable is 503 with Retry-After.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kjournal import errors
from kjournal.api.schemas import Problem

__all__ = [
    "ERROR_PROBLEMS",
    "HEADERS_TOO_LARGE",
    "INTERNAL_ERROR",
    "NOT_FOUND_ROUTE",
    "PROBLEM_CONTENT_TYPE",
    "PROBLEM_TYPE_PREFIX",
    "REQUEST_TIMEOUT",
    "REQUEST_TOO_LARGE",
    "URI_TOO_LONG",
    "VALIDATION_ERROR",
    "ProblemSpec",
    "error_for_problem",
    "problem_for_error",
    "problem_for_status",
    "request_too_large_problem",
    "spec_for_error",
    "spec_for_slug",
    "spec_problem",
    "validation_problem",
]

log = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_PREFIX = "urn:kjournal:problem:"


@dataclass(frozen=True, slots=True)
class ProblemSpec:
    """How one error class looks over HTTP."""

    error: type[errors.KJournalError]
    status: int
    slug: str
    title: str
    extras: tuple[str, ...] = ()  # attributes of the error copied into the body
    retry: bool = False  # answer with Retry-After

    @property
    def type(self) -> str:
        return PROBLEM_TYPE_PREFIX + self.slug


ERROR_PROBLEMS: tuple[ProblemSpec, ...] = (
    ProblemSpec(errors.UnknownTopic, 404, "unknown-topic", "Unknown topic", ("topic",)),
    ProblemSpec(
        errors.RecordTooLarge, 413, "record-too-large", "Record too large", ("size", "limit")
    ),
    ProblemSpec(
        errors.TooManyEvents, 400, "too-many-events", "Too many events", ("count", "limit")
    ),
    ProblemSpec(errors.NestedTooDeeply, 400, "too-deep", "JSON nested too deeply", ("limit",)),
    ProblemSpec(errors.InvalidKey, 400, "invalid-key", "Invalid topic or journal id"),
    ProblemSpec(errors.InvalidCursor, 400, "invalid-cursor", "Invalid feed cursor"),
    # The wire keeps the type (and title) it was published with; the class says what it is.
    ProblemSpec(errors.EmptyAppend, 400, "empty-batch", "Empty batch"),
    ProblemSpec(errors.SeqNrOrderError, 400, "seq-nr-order", "SeqNrs not strictly increasing"),
    ProblemSpec(errors.InvalidSeqNr, 400, "invalid-seq-nr", "Invalid seqNr"),
    ProblemSpec(errors.InvalidPayload, 400, "invalid-payload", "Invalid payload"),
    ProblemSpec(errors.InvalidDuration, 400, "invalid-duration", "Invalid duration"),
    ProblemSpec(errors.InvalidInput, 400, "invalid-input", "Invalid input"),
    ProblemSpec(errors.JournalNotFound, 404, "journal-not-found", "Journal not found"),
    ProblemSpec(
        errors.PositionGone,
        410,
        "position-gone",
        "Feed position no longer held by Kafka",
        ("topic", "partition", "offset", "earliest"),
    ),
    ProblemSpec(
        errors.AppendConflict,
        409,
        "append-conflict",
        "The journal holds these seqNrs with other content",
        ("topic", "id", "seq_nr"),
    ),
    ProblemSpec(
        errors.ConditionFailed,
        412,
        "condition-failed",
        "The journal is not at the expected seqNr",
        ("topic", "id", "seq_nr", "expected"),
    ),
    ProblemSpec(
        errors.SeqNrGap,
        409,
        "seq-nr-gap",
        "The append skips too many seqNrs",
        ("topic", "id", "seq_nr", "first_seq_nr", "max_gap"),
    ),
    ProblemSpec(
        errors.AppendRefused, 409, "append-refused", "Append refused", ("topic", "id", "seq_nr")
    ),
    ProblemSpec(
        errors.JournalQuarantined,
        500,
        "journal-quarantined",
        "Journal quarantined",
        ("topic", "id", "partition", "offset", "reason"),
    ),
    ProblemSpec(
        errors.TopicRepartitioned,
        500,
        "topic-repartitioned",
        "Topic repartitioned",
        ("topic", "id"),
    ),
    ProblemSpec(
        errors.PartitionCountChanged,
        503,
        "partition-count-changed",
        "Topic partition count changed",
        ("topic",),
        retry=True,
    ),
    ProblemSpec(errors.FormatError, 500, "format-error", "Stored data cannot be decoded"),
    ProblemSpec(errors.SchemaError, 500, "schema-error", "Cassandra schema problem"),
    ProblemSpec(errors.NotConfigured, 500, "not-configured", "Not configured for this"),
    ProblemSpec(
        errors.CredentialsRefused,
        500,
        "credentials-refused",
        "A dependency refused our credentials",
    ),
    ProblemSpec(errors.MicroBatchError, 500, "micro-batch-error", "Replication micro-batch error"),
    ProblemSpec(errors.NotAuthenticated, 401, "unauthorized", "Authentication required"),
    ProblemSpec(errors.PermissionDenied, 403, "forbidden", "Not allowed"),
    ProblemSpec(errors.RequestRejected, 400, "request-rejected", "Request rejected"),
    ProblemSpec(errors.Busy, 503, "busy", "Too busy: retry later", retry=True),
    ProblemSpec(errors.KafkaUnavailable, 503, "kafka-unavailable", "Kafka unavailable", retry=True),
    ProblemSpec(
        errors.CassandraUnavailable,
        503,
        "cassandra-unavailable",
        "Cassandra unavailable",
        retry=True,
    ),
    ProblemSpec(errors.Unavailable, 503, "unavailable", "Dependency unavailable", retry=True),
    ProblemSpec(
        errors.OutcomeUnknown, 504, "outcome-unknown", "Outcome unknown: retry", retry=True
    ),
    ProblemSpec(errors.DeadlineExceeded, 504, "deadline-exceeded", "Deadline exceeded"),
    ProblemSpec(errors.KJournalError, 500, "internal-error", "Internal error"),
)

# Problems of the HTTP layer itself; `error` is what the client raises for them.
VALIDATION_ERROR = ProblemSpec(
    errors.InvalidInput, 400, "validation-error", "Request does not match the API schema"
)
REQUEST_TOO_LARGE = ProblemSpec(errors.InvalidInput, 413, "request-too-large", "Request too large")
NOT_FOUND_ROUTE = ProblemSpec(errors.KJournalError, 404, "not-found", "Not found")
REQUEST_TIMEOUT = ProblemSpec(
    errors.RequestRejected, 408, "request-timeout", "Request not received in time"
)
URI_TOO_LONG = ProblemSpec(errors.RequestRejected, 414, "uri-too-long", "Request target too long")
HEADERS_TOO_LARGE = ProblemSpec(
    errors.RequestRejected, 431, "headers-too-large", "Request header fields too large"
)
INTERNAL_ERROR = ERROR_PROBLEMS[-1]

_BY_SLUG: dict[str, ProblemSpec] = {
    spec.slug: spec
    for spec in (
        *ERROR_PROBLEMS,
        VALIDATION_ERROR,
        REQUEST_TOO_LARGE,
        REQUEST_TIMEOUT,
        URI_TOO_LONG,
        HEADERS_TOO_LARGE,
    )
}


def spec_for_slug(slug: str) -> ProblemSpec | None:
    """The spec of a problem type's slug (`urn:kjournal:problem:<slug>`), if this version has it."""
    return _BY_SLUG.get(slug)


def spec_for_error(exc: errors.KJournalError) -> ProblemSpec:
    """The most specific entry of ERROR_PROBLEMS for `exc`'s class."""
    for spec in ERROR_PROBLEMS:
        if isinstance(exc, spec.error):
            return spec
    raise AssertionError("KJournalError is the last entry")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def problem_for_error(exc: errors.KJournalError, instance: str | None = None) -> Problem:
    spec = spec_for_error(exc)
    extras = {_camel(name): getattr(exc, name) for name in spec.extras if hasattr(exc, name)}
    return _problem(spec, str(exc) or spec.title, instance, **extras)


def _problem(spec: ProblemSpec, detail: str, instance: str | None, **extras: Any) -> Problem:
    members = {"type": spec.type, "title": spec.title, "status": spec.status, "detail": detail}
    return Problem.model_validate({**members, "instance": instance, **extras})


def problem_for_status(
    status: int, title: str, detail: str | None = None, instance: str | None = None
) -> Problem:
    """A problem of the HTTP layer without a type of its own (about:blank: title = status phrase)."""
    if status == 404:
        return _problem(NOT_FOUND_ROUTE, "no such resource", instance)
    return Problem(title=title, status=status, detail=detail, instance=instance)


_KEY_MARKER = "[key]"  # pydantic's loc suffix when a mapping's key, not its value, is invalid


def _field_path(loc: Sequence[Any]) -> str:
    path = ""
    for index, part in enumerate(loc):
        if part == _KEY_MARKER:
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        elif index + 1 < len(loc) and loc[index + 1] == _KEY_MARKER:
            path += f"[{json.dumps(part)}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def validation_problem(
    validation_errors: Iterable[Mapping[str, Any]], instance: str | None = None
) -> Problem:
    """A `validation-error` problem from pydantic/FastAPI errors (`loc`, `msg`), one per field."""
    items: list[dict[str, Any]] = []
    for error in validation_errors:
        loc = list(error.get("loc") or ())
        location = str(loc.pop(0)) if loc and loc[0] in ("body", "query", "path", "header") else ""
        field = _field_path(loc) or location
        item: dict[str, Any] = {
            "location": location,
            "field": field,
            "detail": str(error.get("msg", "invalid")),
        }
        if location == "body":
            item["pointer"] = "#" + "".join(f"/{part}" for part in loc if part != _KEY_MARKER)
        items.append(item)
    spec = VALIDATION_ERROR
    if items:
        first = items[0]
        detail = f"{first['field']}: {first['detail']}"
        if len(items) > 1:
            detail += f" (and {len(items) - 1} more)"
    else:
        detail = spec.title
    return _problem(spec, detail, instance, errors=items)


def spec_problem(spec: ProblemSpec, detail: str, instance: str | None = None) -> Problem:
    """A problem of `spec`'s type (the HTTP layer's own: authentication, limits)."""
    return _problem(spec, detail, instance)


def request_too_large_problem(size: int | None, limit: int, instance: str | None) -> Problem:
    spec = REQUEST_TOO_LARGE
    detail = f"request body exceeds the limit of {limit} bytes"
    if size is not None:
        detail = f"request body of {size} bytes exceeds the limit of {limit} bytes"
    return _problem(spec, detail, instance, limit=limit)


def error_for_problem(problem: Problem) -> errors.KJournalError:
    """The kjournal error a problem stands for (KJournalError for types this version lacks)."""
    detail = problem.detail or problem.title
    slug = problem.type.removeprefix(PROBLEM_TYPE_PREFIX)
    spec = _BY_SLUG.get(slug) if problem.type.startswith(PROBLEM_TYPE_PREFIX) else None
    extras = problem.extras
    if spec is None:
        return errors.KJournalError(f"HTTP {problem.status} {problem.title}: {detail}")
    cls = spec.error
    try:
        if cls is errors.UnknownTopic:
            return errors.UnknownTopic(str(extras["topic"]))
        if cls is errors.RecordTooLarge:
            return errors.RecordTooLarge(int(extras["size"]), int(extras["limit"]))
        if cls is errors.TooManyEvents:
            return errors.TooManyEvents(int(extras["count"]), int(extras["limit"]))
        if cls is errors.AppendConflict:
            return errors.AppendConflict(
                str(extras["topic"]), str(extras["id"]), int(extras["seqNr"])
            )
        if cls is errors.ConditionFailed:
            return errors.ConditionFailed(
                str(extras["topic"]),
                str(extras["id"]),
                int(extras["seqNr"]),
                int(extras["expected"]),
            )
        if cls is errors.SeqNrGap:
            return errors.SeqNrGap(
                str(extras["topic"]),
                str(extras["id"]),
                int(extras["seqNr"]),
                int(extras["firstSeqNr"]),
                int(extras["maxGap"]),
            )
        if cls is errors.AppendRefused:
            return errors.AppendRefused(
                str(extras["topic"]), str(extras["id"]), int(extras["seqNr"]), detail
            )
        if cls is errors.NestedTooDeeply:
            return errors.NestedTooDeeply(int(extras["limit"]))
        if cls is errors.JournalQuarantined:
            return errors.JournalQuarantined(
                str(extras["topic"]),
                str(extras["id"]),
                int(extras["partition"]),
                int(extras["offset"]),
                str(extras["reason"]),
            )
    except (KeyError, TypeError, ValueError):
        log.debug("problem %s lacks the members of %s", slug, cls.__name__)
    if cls in (
        errors.UnknownTopic,
        errors.RecordTooLarge,
        errors.TooManyEvents,
        errors.NestedTooDeeply,
        errors.JournalQuarantined,
    ):
        cls = cls.__mro__[1]
    if issubclass(cls, errors.AppendRefused):  # without the members its constructor needs
        cls = errors.KJournalError
    if cls in (errors.TopicRepartitioned, errors.PartitionCountChanged):
        # Their constructors want what the problem does not carry; the message says it all.
        return errors.Unavailable(detail) if spec.retry else errors.KJournalError(detail)
    return cls(detail)
