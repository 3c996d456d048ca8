"""`ReaderOutcomes`: the writer learns each append's outcome from the reader service (over HTTP).

The writer has no Cassandra and does not follow Kafka, so it cannot know what the append rule
makes of its record (docs/concurrency.md); the reader can: `GET /v1/journals/{topic}/{id}/appends/
{offset}`. The caller's bearer token is passed on (the reader asks for the same `journal:append`
scope), and so is the trace context. When the reader cannot tell, the append is in Kafka but its
fate is unknown to the writer: OutcomeUnknown (504), and the client's resend of the same append is
answered as a replay or a refusal, never stored twice.
"""

from __future__ import annotations

from contextvars import ContextVar
from types import TracebackType

import httpx
from kjournal.api import (
    AppendOutcomeOut,
    Problem,
    append_outcome_from_out,
    error_for_problem,
    quote_segment,
)
from kjournal.errors import JournalQuarantined, OutcomeUnknown
from kjournal.model import AppendOutcome, Key
from opentelemetry.propagate import inject
from pydantic import ValidationError

from kjournal_writer.settings import ReaderLinkSettings

__all__ = ["CALLER_AUTHORIZATION", "ReaderOutcomes"]

CALLER_AUTHORIZATION: ContextVar[str | None] = ContextVar(
    "kjournal_writer_caller_authorization", default=None
)
"""The `Authorization` header of the request being served, passed on to the reader."""


class ReaderOutcomes:
    """`kjournal.ports.AppendOutcomes` over the reader's HTTP API; open with `async with`."""

    def __init__(self, settings: ReaderLinkSettings) -> None:
        if not settings.url:
            raise ValueError("KJOURNAL_READER__URL is not set")
        self._url = settings.url.rstrip("/")
        self._client = httpx.AsyncClient(
            base_url=self._url, timeout=settings.timeout_s, follow_redirects=False
        )

    async def __aenter__(self) -> ReaderOutcomes:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._client.aclose()

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        headers: dict[str, str] = {}
        authorization = CALLER_AUTHORIZATION.get()
        if authorization:
            headers["authorization"] = authorization
        inject(headers)
        path = f"/v1/journals/{quote_segment(key.topic)}/{quote_segment(key.id)}/appends/{offset}"
        landed = f"the append of journal {key} landed at offset {offset}"
        try:
            response = await self._client.get(path, headers=headers)
        except httpx.HTTPError as exc:
            raise OutcomeUnknown(
                f"{landed}, but the reader at {self._url} did not tell its outcome "
                f"({type(exc).__name__}: {exc}); resending the same append is safe"
            ) from exc
        try:
            if response.status_code == 200:
                return append_outcome_from_out(
                    AppendOutcomeOut.model_validate_json(response.content)
                )
            error = error_for_problem(Problem.model_validate_json(response.content))
        except ValidationError as exc:
            raise OutcomeUnknown(
                f"{landed}, but the reader answered {response.status_code} with a body this "
                "writer does not understand; resending the same append is safe"
            ) from exc
        if isinstance(error, JournalQuarantined | OutcomeUnknown):
            raise error
        raise OutcomeUnknown(
            f"{landed}, but the reader answered {response.status_code} for its outcome: {error}; "
            "resending the same append is safe"
        ) from error
