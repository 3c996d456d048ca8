"""What the sync and async clients share: URLs, bodies, parsing, problems → errors, retry policy.

No I/O here; `_sync.Client` and `_async.AsyncClient` differ only in how they send and wait.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import ValidationError

from kjournal.api.convert import event_record_from_json
from kjournal.api.keys import quote_segment
from kjournal.api.problems import PROBLEM_CONTENT_TYPE, error_for_problem
from kjournal.api.schemas import Problem
from kjournal.errors import DeadlineExceeded, FormatError, KJournalError, Unavailable
from kjournal.model import EventRecord, Key, PartitionOffset

__all__ = [
    "MarkResult",
    "RetryPolicy",
    "decode_line",
    "error_for_response",
    "journal_path",
    "transport_error",
]

RETRYABLE_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class MarkResult:
    id: str
    partition_offset: PartitionOffset


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for idempotent requests (GETs): transport errors and 502/503/504.

    Appends, deletes, purges and marks are retried only when the connection could not even be
    opened (nothing was sent); any other failure is the caller's to judge, since the action may
    have reached Kafka.
    """

    attempts: int = 4  # in all, the first included
    backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    statuses: frozenset[int] = field(default=RETRYABLE_STATUSES)

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based); honours Retry-After."""
        hinted = _retry_after_seconds(retry_after)
        if hinted is not None:
            return min(hinted, self.max_backoff_s)
        base: float = min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)
        return base * (0.5 + random.random() / 2)


NO_RETRY = RetryPolicy(attempts=1)


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def journal_path(key: Key, suffix: str = "") -> str:
    return f"/v1/journals/{quote_segment(key.topic)}/{quote_segment(key.id)}{suffix}"


def topic_path(topic: str, suffix: str) -> str:
    return f"/v1/topics/{quote_segment(topic)}{suffix}"


def problem_of(status: int, content_type: str, body: bytes) -> Problem | None:
    """The problem in a response body, if it holds one."""
    if PROBLEM_CONTENT_TYPE not in content_type and "json" not in content_type:
        return None
    try:
        return Problem.model_validate_json(body)
    except ValidationError:
        return None


def error_for_response(response: httpx.Response) -> KJournalError:
    """The kjournal error for a non-success response (its body must have been read)."""
    problem = problem_of(
        response.status_code, response.headers.get("content-type", ""), response.content
    )
    if problem is not None:
        return error_for_problem(problem)
    text = response.text.strip()[:200]
    if response.status_code in (502, 503):
        return Unavailable(f"HTTP {response.status_code} from {response.url}: {text}")
    if response.status_code == 504:
        return DeadlineExceeded(f"HTTP 504 from {response.url}: {text}")
    return KJournalError(f"HTTP {response.status_code} from {response.url}: {text}")


def transport_error(exc: httpx.TransportError, url: str) -> KJournalError:
    if isinstance(exc, httpx.TimeoutException):
        return DeadlineExceeded(f"{url} did not answer in time: {type(exc).__name__}")
    return Unavailable(f"cannot reach {url}: {type(exc).__name__}: {exc}")


def decode_line(line: str) -> EventRecord | Problem:
    """One line of an events stream: an event, or the problem that ended the stream."""
    try:
        value: Any = json.loads(line)
    except ValueError as exc:
        raise FormatError(f"not a JSON line: {line[:100]!r}") from exc
    if isinstance(value, dict) and "problem" in value:
        return Problem.model_validate(value["problem"])
    if not isinstance(value, dict):
        raise FormatError(f"not an event line: {line[:100]!r}")
    return event_record_from_json(value)


def decode_id_line(line: str) -> str | Problem:
    try:
        value: Any = json.loads(line)
    except ValueError as exc:
        raise FormatError(f"not a JSON line: {line[:100]!r}") from exc
    if isinstance(value, dict) and "problem" in value:
        return Problem.model_validate(value["problem"])
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise FormatError(f"not a journal id line: {line[:100]!r}")
    return str(value["id"])


def read_params(from_: int, to: int | None, limit: int | None) -> dict[str, int]:
    params = {"from": from_}
    if to is not None:
        params["to"] = to
    if limit is not None:
        params["limit"] = limit
    return params


def base_url(url: str | None, service: str) -> str:
    if not url:
        raise KJournalError(f"no {service} URL configured for this client")
    return url.rstrip("/")


def merged_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    result = {"accept": "application/json, application/x-ndjson, application/problem+json"}
    result.update(headers or {})
    return result
