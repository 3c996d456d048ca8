"""Errors → `application/problem+json`: FastAPI glue over kjournal.api.problems (the mapping).

Handlers raise kjournal errors for domain conditions; this turns them, FastAPI's validation
errors and Starlette's HTTP errors into problems. Anything else is a bare 500 carrying a trace
id that is also logged with the traceback.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from kjournal.api.problems import (
    INTERNAL_ERROR,
    problem_for_error,
    problem_for_status,
    problem_response,
    validation_problem,
)
from kjournal.api.schemas import Problem
from kjournal.errors import KJournalError
from starlette.exceptions import HTTPException
from starlette.responses import Response

log = logging.getLogger(__name__)


class ProblemHandlers:
    def __init__(self, retry_after_s: int) -> None:
        self.retry_after_s = retry_after_s

    def install(self, app: FastAPI) -> None:
        app.add_exception_handler(KJournalError, self.kjournal_error)  # type: ignore[arg-type]
        app.add_exception_handler(RequestValidationError, self.validation_error)  # type: ignore[arg-type]
        app.add_exception_handler(HTTPException, self.http_error)  # type: ignore[arg-type]
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
        return response

    async def internal_error(self, request: Request, exc: Exception) -> Response:
        return self.respond(internal_problem(exc, request.method, request.url.path))


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
