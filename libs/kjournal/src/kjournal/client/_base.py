"""What the sync and async clients share: URLs, bodies, parsing, problems → errors, retry policy.

No I/O here (as httpx's own `BaseClient`): `BaseClient` builds every request as a `Call` (what to
send, how to retry it, how to read the answer) and decides when to try again; a `ReadCursor`
follows one event stream. `_sync.Client` and `_async.AsyncClient` differ only in how they send
and wait.
"""

from __future__ import annotations

import enum
import json
import random
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from typing import Generic
from typing import TypeVar

import httpx
import orjson
from opentelemetry import propagate
from pydantic import ValidationError

from kjournal.api.conditions import condition_headers
from kjournal.api.convert import append_request_body
from kjournal.api.convert import append_result
from kjournal.api.convert import event_record_from_json
from kjournal.api.convert import journal_status_from_out
from kjournal.api.convert import replication_from_out
from kjournal.api.feed_items import FeedItem
from kjournal.api.feed_items import feed_item_from_json
from kjournal.api.keys import quote_segment
from kjournal.api.problems import PROBLEM_CONTENT_TYPE
from kjournal.api.problems import error_for_problem
from kjournal.api.schemas import AppendResponse
from kjournal.api.schemas import JournalStatusOut
from kjournal.api.schemas import MarkResponse
from kjournal.api.schemas import PointerOut
from kjournal.api.schemas import PositionOut
from kjournal.api.schemas import Problem
from kjournal.api.schemas import ReadinessOut
from kjournal.api.schemas import ReplicationOut
from kjournal.errors import DeadlineExceeded
from kjournal.errors import FormatError
from kjournal.errors import JournalNotFound
from kjournal.errors import KJournalError
from kjournal.errors import Unavailable
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model.replication import TopicReplication
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus

__all__ = [
    "BaseClient",
    "Call",
    "FollowCursor",
    "MarkResult",
    "ReadCursor",
    "Retries",
    "RetryPolicy",
    "decode_line",
    "error_for_response",
    "feed_item_of_line",
    "feed_params",
    "journal_path",
    "trace_context",
    "transport_error",
]

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class MarkResult:
    id: str
    partition_offset: PartitionOffset


@dataclass(frozen=True)
class RetryPolicy:
    """When to send a request again: after a transport error (no connection, a timeout, a
    connection lost mid-answer) or a 502/503/504 answer, with exponential backoff (a Retry-After
    answer sets the pause), until `budget_s` seconds have passed since the first failure, or after
    `attempts` attempts if that is set. A streamed read resumes after the last event it received,
    and a read that made progress starts its budget again.

    Appends, deletes and marks are retried like reads: a resent append whose first copy was taken
    is answered as a replay (docs/concurrency.md), a delete repeats its bound and a mark has no
    effect. A purge is resent only when no connection could be opened: a second purge
    would erase what was appended in between.
    """

    budget_s: float = 30.0
    backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    attempts: int | None = None  # in all, the first included; None: as many as the budget allows
    statuses: frozenset[int] = field(default=RETRYABLE_STATUSES)

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based); honours Retry-After."""
        hinted = _retry_after_seconds(retry_after)
        if hinted is not None:
            return min(hinted, self.max_backoff_s)
        base: float = min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)
        return base * (0.5 + random.random() / 2)

    def allows(self, attempt: int, failing_for_s: float, pause_s: float) -> bool:
        """Whether retry number `attempt` may go ahead after `pause_s`, the request having failed
        for `failing_for_s` seconds so far."""
        if self.attempts is not None and attempt >= self.attempts:
            return False
        return failing_for_s + pause_s <= self.budget_s


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


def _json_line(line: str | bytes) -> Any:
    """A stream line's JSON value, or the problem that ended the stream. orjson first; what it
    refuses (integers beyond 64 bits, lone surrogates) the standard library reads."""
    try:
        value: Any = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise FormatError(f"not a JSON line: {line[:100]!r}") from exc
    if isinstance(value, dict) and "problem" in value:
        return Problem.model_validate(value["problem"])
    return value


def decode_line(line: str | bytes) -> EventRecord | Problem:
    """One line of an events stream: an event, or the problem that ended the stream."""
    value = _json_line(line)
    if isinstance(value, Problem):
        return value
    if not isinstance(value, dict):
        raise FormatError(f"not an event line: {line[:100]!r}")
    return event_record_from_json(value)


def decode_id_line(line: str) -> str | Problem:
    value = _json_line(line)
    if isinstance(value, Problem):
        return value
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise FormatError(f"not a journal id line: {line[:100]!r}")
    return str(value["id"])


def journal_id_of_line(line: str) -> str:
    """One line of an ids stream; the problem that ended the stream is raised."""
    item = decode_id_line(line)
    if isinstance(item, Problem):
        raise error_for_problem(item)
    return item


def feed_params(
    from_end: bool, tags: Sequence[str], id_prefix: str | None, partitions: Sequence[int] | None
) -> dict[str, Any]:
    """A topic feed's query, but for the cursor (docs/feed.md)."""
    params: dict[str, Any] = {"from": "end" if from_end else "start"}
    if tags:
        params["tag"] = list(tags)
    if id_prefix:
        params["idPrefix"] = id_prefix
    if partitions is not None:
        params["partitions"] = ",".join(str(p) for p in partitions)
    return params


def feed_item_of_line(line: str) -> FeedItem:
    """One line of a catch-up feed; the problem that ended the stream is raised."""
    value = _json_line(line)
    if isinstance(value, Problem):
        raise error_for_problem(value)
    if not isinstance(value, dict):
        raise FormatError(f"not a feed line: {line[:100]!r}")
    return feed_item_from_json(value)


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


def trace_context() -> dict[str, str]:
    """The caller's current trace context as request headers (W3C `traceparent` by default,
    as `OTEL_PROPAGATORS` says), so its trace continues in the services; empty without one."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def merged_headers(headers: Mapping[str, str] | None, token: str | None = None) -> dict[str, str]:
    """Headers of every request: what the client accepts, the bearer token if there is one (a
    service with authentication on needs it), then the caller's own."""
    result = {"accept": "application/json, application/x-ndjson, application/problem+json"}
    if token:
        result["authorization"] = f"Bearer {token}"
    result.update(headers or {})
    return result


# --- answers ---------------------------------------------------------------------------------


def _success(response: httpx.Response) -> bytes:
    """The body of a success; any other answer is raised as its kjournal error."""
    if not response.is_success:
        raise error_for_response(response)
    return response.content


def _appended(response: httpx.Response) -> AppendResult:
    return append_result(AppendResponse.model_validate_json(_success(response)))


def _position(response: httpx.Response) -> PartitionOffset:
    out = PositionOut.model_validate_json(_success(response))
    return PartitionOffset(out.partition, out.offset)


def _marked(response: httpx.Response) -> MarkResult:
    out = MarkResponse.model_validate_json(_success(response))
    return MarkResult(out.id, PartitionOffset(out.partition, out.offset))


def _pointer(response: httpx.Response) -> SeqNr | None:
    try:
        body = _success(response)
    except JournalNotFound:
        return None
    return SeqNr(PointerOut.model_validate_json(body).seq_nr)


def _status(response: httpx.Response) -> JournalStatus | None:
    try:
        body = _success(response)
    except JournalNotFound:
        return None
    return journal_status_from_out(JournalStatusOut.model_validate_json(body))


def _replication(response: httpx.Response) -> TopicReplication:
    return replication_from_out(ReplicationOut.model_validate_json(_success(response)))


def _readiness(response: httpx.Response) -> ReadinessOut:
    return ReadinessOut.model_validate_json(response.content)  # 503 is an answer too


# --- requests --------------------------------------------------------------------------------


class Retries(enum.Enum):
    """Which failures of a request are worth sending it again for."""

    SAFE = "transport errors and the policy's statuses"  # reads, appends, deletes, marks
    UNSENT = "only when no connection could be opened"  # purges
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request, how to retry it, and how to read its final answer (`parse` raises the
    kjournal error of a failure)."""

    method: str
    url: str
    parse: Callable[[httpx.Response], T]
    retries: Retries = Retries.SAFE
    params: Mapping[str, Any] | None = None
    json: Any = None
    where: str | None = None  # what a transport error names, if not `url`
    headers: Mapping[str, str] | None = None  # the call's own (conditions)


class BaseClient:
    """State, requests and retry decisions of `Client` and `AsyncClient` (no I/O)."""

    def __init__(
        self, writer_url: str | None, reader_url: str | None, retry: RetryPolicy | None
    ) -> None:
        self.writer_url = writer_url
        self.reader_url = reader_url
        self.retry = retry or RetryPolicy()

    def _writer(self, path: str) -> str:
        return base_url(self.writer_url, "writer") + path

    def _reader(self, path: str) -> str:
        return base_url(self.reader_url, "reader") + path

    # --- writer --------------------------------------------------------------------------------

    def _append_call(
        self,
        key: Key,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None,
        headers: Mapping[str, str] | None,
        expected_seq_nr: int | None = None,
    ) -> Call[AppendResult]:
        url = self._writer(journal_path(key, "/events"))
        body = append_request_body(events, metadata, headers)
        conditions = condition_headers(expected_seq_nr)
        return Call("POST", url, _appended, Retries.SAFE, json=body, headers=conditions)

    def _delete_call(self, key: Key, to: int) -> Call[PartitionOffset]:
        url = self._writer(journal_path(key, "/events"))
        return Call("DELETE", url, _position, Retries.SAFE, params={"to": to})

    def _purge_call(self, key: Key) -> Call[PartitionOffset]:
        return Call("DELETE", self._writer(journal_path(key)), _position, Retries.UNSENT)

    def _mark_call(self, key: Key, id: str | None) -> Call[MarkResult]:
        url = self._writer(journal_path(key, "/marks"))
        body = {} if id is None else {"id": id}
        return Call("POST", url, _marked, Retries.SAFE, json=body)

    # --- reader --------------------------------------------------------------------------------

    def _read_cursor(self, key: Key, from_: int, to: int, limit: int | None) -> ReadCursor:
        return ReadCursor(self._reader(journal_path(key, "/events")), from_, to, limit, self.retry)

    def _pointer_call(self, key: Key) -> Call[SeqNr | None]:
        return Call("GET", self._reader(journal_path(key, "/pointer")), _pointer)

    def _status_call(self, key: Key) -> Call[JournalStatus | None]:
        return Call("GET", self._reader(journal_path(key)), _status)

    def _ids_url(self, topic: str) -> str:
        return self._reader(topic_path(topic, "/journals"))

    def _follow_cursor(
        self,
        topic: str,
        after: str | None,
        from_end: bool,
        tags: Sequence[str],
        id_prefix: str | None,
        partitions: Sequence[int] | None,
        heartbeat_s: float | None,
    ) -> FollowCursor:
        params = feed_params(from_end, tags, id_prefix, partitions)
        if heartbeat_s is not None:
            params["heartbeat"] = heartbeat_s
        return FollowCursor(self._feed_url(topic), params, after, self.retry)

    def _feed_url(self, topic: str) -> str:
        return self._reader(topic_path(topic, "/events"))

    def _replication_call(self, topic: str) -> Call[TopicReplication]:
        return Call("GET", self._reader(topic_path(topic, "/replication")), _replication)

    def _ready_call(self, service: str) -> Call[ReadinessOut]:
        url = base_url(self.reader_url if service == "reader" else self.writer_url, service)
        return Call("GET", url + "/readyz", _readiness, Retries.NEVER, where=url)

    # --- retries -------------------------------------------------------------------------------

    def _pause_after_transport_error(
        self, call: Call[Any], exc: httpx.TransportError, attempt: int, failing_for_s: float
    ) -> float:
        """Seconds to wait before sending `call` again, or raise the error `exc` means."""
        again = call.retries is Retries.SAFE or (
            call.retries is Retries.UNSENT and isinstance(exc, httpx.ConnectError)
        )
        pause = self.retry.delay(attempt)
        if not again or not self.retry.allows(attempt, failing_for_s, pause):
            raise transport_error(exc, call.where or call.url) from exc
        return pause

    def _pause_after_answer(
        self, call: Call[Any], response: httpx.Response, attempt: int, failing_for_s: float
    ) -> float | None:
        """Seconds to wait before sending `call` again, or None: `response` is the answer."""
        if (
            call.retries is Retries.SAFE
            and not response.is_success
            and response.status_code in self.retry.statuses
        ):
            pause = self.retry.delay(attempt, response.headers.get("retry-after"))
            if self.retry.allows(attempt, failing_for_s, pause):
                return pause
        return None


class ReadCursor:
    """One `read`: where it resumes after a failure (after the last event received), and whether
    it does. The clients open each attempt with `params()` and feed it what they receive."""

    def __init__(
        self, url: str, from_: int, to: int, limit: int | None, retry: RetryPolicy
    ) -> None:
        self.url = url
        self._retry = retry
        self._next_from, self._to, self._remaining, self._failures = from_, to, limit, 0
        self._failing_since: float | None = None
        self._error: KJournalError | None = None
        self._retryable = False
        self._retry_after: str | None = None
        self._cause: BaseException | None = None

    def params(self) -> dict[str, int]:
        """The query of the next attempt (which starts with no failure)."""
        self._error, self._retry_after, self._cause = None, None, None
        return read_params(self._next_from, self._to, self._remaining)

    @property
    def failed(self) -> bool:
        return self._error is not None

    def rejected(self, response: httpx.Response) -> None:
        """The attempt got an error answer (its body read)."""
        self._error = error_for_response(response)
        self._retryable = response.status_code in self._retry.statuses
        self._retry_after = response.headers.get("retry-after")

    def unreachable(self, exc: httpx.TransportError) -> None:
        self._error, self._retryable, self._cause = transport_error(exc, self.url), True, exc

    def take(self, line: str | bytes) -> EventRecord | None:
        """The event on a line; None for a blank line, and for a problem line, which ends the
        attempt as `failed`."""
        item = decode_line(line) if line else None
        if isinstance(item, Problem):
            self._error = error_for_problem(item)
            self._retryable = item.status in self._retry.statuses
            return None
        return item

    def advance(self, record: EventRecord) -> bool:
        """`record` was delivered; whether the read is complete."""
        self._failures = 0
        self._failing_since = None
        self._next_from = record.seq_nr + 1
        if self._remaining is not None:
            self._remaining -= 1
        return self._next_from > self._to or self._remaining == 0

    def pause(self) -> float:
        """After a failed attempt: seconds to wait before resuming, or raise its error."""
        assert self._error is not None, "pause() after an attempt that did not fail"
        self._failures += 1
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        pause = self._retry.delay(self._failures, self._retry_after)
        allowed = self._retry.allows(self._failures, now - self._failing_since, pause)
        if not self._retryable or not allowed:
            raise self._error from self._cause
        return pause


EVENT_STREAM_HEADERS = {"accept": "text/event-stream"}


class FollowCursor(ReadCursor):
    """One `follow` of a topic feed (docs/feed.md): the live tail as server-sent events, resumed
    after the last entry received (its cursor) whenever it fails in a way worth retrying (the
    reader restarting, Kafka or Cassandra unavailable); an entry resets the retry budget."""

    def __init__(
        self, url: str, params: dict[str, Any], after: str | None, retry: RetryPolicy
    ) -> None:
        super().__init__(url, 1, 1, None, retry)
        self._params = params
        self.cursor = after
        self._fields: dict[str, str] = {}

    def follow_params(self) -> dict[str, Any]:
        """The query of the next attempt (which starts with no failure)."""
        self.params()
        self._fields = {}
        return self._params if self.cursor is None else {**self._params, "after": self.cursor}

    def take_line(self, line: str) -> FeedItem | None:
        """Feed one line of the event stream; the entry it completes, if any. A `problem`
        event ends the attempt as `failed`."""
        if line:
            name, _, value = line.partition(":")
            self._fields[name] = value[1:] if value.startswith(" ") else value
            return None
        fields, self._fields = self._fields, {}
        if "data" not in fields:
            return None
        value = _json_line(fields["data"])
        if fields.get("event") == "problem":
            problem = Problem.model_validate(value)
            self._error = error_for_problem(problem)
            self._retryable = problem.status in self._retry.statuses
            return None
        if isinstance(value, Problem) or not isinstance(value, dict):
            raise FormatError(f"not a feed event: {fields['data'][:100]!r}")
        return feed_item_from_json(value)

    def delivered(self, item: FeedItem) -> None:
        self._failures = 0
        self._failing_since = None
        self.cursor = item.cursor
