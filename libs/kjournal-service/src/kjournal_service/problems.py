"""Errors → `application/problem+json`: rendering and FastAPI glue over kjournal.api.problems
(the mapping), and the OpenAPI declaration of problem answers.

Handlers raise kjournal errors for domain conditions; this turns them, FastAPI's validation
errors and Starlette's HTTP errors into problems. Anything else is a bare 500 carrying a trace
id that is also logged with the traceback.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from kjournal.api.problems import INTERNAL_ERROR
from kjournal.api.problems import PROBLEM_CONTENT_TYPE
from kjournal.api.problems import PROBLEM_TYPE_PREFIX
from kjournal.api.problems import problem_for_error
from kjournal.api.problems import problem_for_status
from kjournal.api.problems import spec_for_slug
from kjournal.api.problems import validation_problem
from kjournal.api.schemas import Problem
from kjournal.errors import KJournalError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Route

log = logging.getLogger(__name__)

CLIENT_CLOSED_REQUEST = 499


@dataclass(frozen=True, slots=True)
class ProblemResponse:
    """A rendered problem: what any web framework needs to answer with it."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def problem_response(problem: Problem, retry_after_s: int | None = None) -> ProblemResponse:
    body = json.dumps(
        problem.model_dump(mode="json", exclude_none=True),
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()
    headers: tuple[tuple[str, str], ...] = (("content-type", PROBLEM_CONTENT_TYPE),)
    spec = spec_for_slug(problem.type.removeprefix(PROBLEM_TYPE_PREFIX))
    if retry_after_s is not None and spec is not None and spec.retry:
        headers += (("retry-after", str(retry_after_s)),)
    return ProblemResponse(problem.status, headers, body)


class ProblemHandlers:
    def __init__(self, retry_after_s: int) -> None:
        self.retry_after_s = retry_after_s

    def install(self, app: FastAPI) -> None:
        app.add_exception_handler(KJournalError, self.kjournal_error)  # type: ignore[arg-type]
        app.add_exception_handler(RequestValidationError, self.validation_error)  # type: ignore[arg-type]
        app.add_exception_handler(HTTPException, self.http_error)  # type: ignore[arg-type]
        app.add_exception_handler(ClientDisconnect, self.client_gone)  # type: ignore[arg-type]
        app.add_exception_handler(Exception, self.internal_error)

    async def handle(self, request: Request, exc: Exception) -> Response:
        """The answer the installed handlers give to `exc` (for a route served outside FastAPI's
        routing, see hot_routes)."""
        if isinstance(exc, KJournalError):
            return await self.kjournal_error(request, exc)
        if isinstance(exc, RequestValidationError):
            return await self.validation_error(request, exc)
        if isinstance(exc, HTTPException):
            return await self.http_error(request, exc)
        if isinstance(exc, ClientDisconnect):
            return await self.client_gone(request, exc)
        return await self.internal_error(request, exc)

    def respond(self, problem: Problem) -> Response:
        rendered = problem_response(problem, self.retry_after_s)
        return Response(rendered.body, rendered.status, headers=dict(rendered.headers))

    async def kjournal_error(self, request: Request, exc: KJournalError) -> Response:
        problem = problem_for_error(exc, request.url.path)
        if problem.status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
        return self.respond(problem)

    async def validation_error(self, request: Request, exc: RequestValidationError) -> Response:
        return self.respond(validation_problem(exc.errors(), request.url.path))

    async def http_error(self, request: Request, exc: HTTPException) -> Response:
        problem = problem_for_status(
            exc.status_code, _phrase(exc), str(exc.detail), request.url.path
        )
        response = self.respond(problem)
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        if exc.status_code == 405:
            response.headers["Allow"] = ", ".join(allowed_methods(request))
        return response

    async def client_gone(self, request: Request, exc: ClientDisconnect) -> Response:
        """The client went away before its request was read: nothing was done, nobody to answer.
        Counted as 499 (the status nginx uses for it), not as a server error."""
        log.info(
            "%s %s: the client disconnected before its request was read",
            request.method,
            request.url.path,
        )
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    async def internal_error(self, request: Request, exc: Exception) -> Response:
        return self.respond(internal_problem(exc, request.method, request.url.path))


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (Starlette's own 405 names only the
    first route that matched the path, though FastAPI declares one route per method)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        if (
            isinstance(route, Route)
            and route.methods
            and route.path_regex.match(request.scope["path"])
        ):
            methods |= route.methods
    return sorted(methods)


def stream_problem(exc: Exception, method: str, path: str) -> dict[str, Any]:
    """The `problem` member of the line that ends a stream broken by `exc`."""
    if isinstance(exc, KJournalError):
        log.warning("%s %s failed while streaming: %s", method, path, exc)
        problem = problem_for_error(exc, path)
    else:
        problem = internal_problem(exc, method, path)
    return problem.model_dump(mode="json", exclude_none=True)


def internal_problem(exc: Exception, method: str, path: str) -> Problem:
    trace_id = uuid.uuid4().hex
    log.error("unhandled error in %s %s", method, path, exc_info=exc, extra={"trace_id": trace_id})
    spec = INTERNAL_ERROR
    return Problem.model_validate(
        {
            "type": spec.type,
            "title": spec.title,
            "status": spec.status,
            "detail": f"internal error; trace id {trace_id}",
            "instance": path,
            "traceId": trace_id,
        }
    )


def _phrase(exc: HTTPException) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(exc.status_code).phrase
    except ValueError:
        return str(exc.detail)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries declaring problem bodies for these statuses (FastAPI shape)."""
    descriptions = {
        400: "invalid request (problem types validation-error, invalid-key, empty-batch, ...)",
        404: "unknown topic, no such journal, or no such route",
        410: "a feed cursor before the oldest offset Kafka still holds (position-gone)",
        413: "request body or encoded record too large",
        500: "quarantined journal, undecodable data, or an internal error",
        503: "Kafka or Cassandra unavailable; see Retry-After",
        504: "a dependency did not answer in time",
    }
    return {
        status: {
            "model": Problem,
            "description": descriptions.get(status, "problem"),
            "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status in statuses
    }
