"""Request dependencies (all `async def`: FastAPI runs plain `def` ones in a thread pool, a
thread hop per dependency per request): the open Journals, the metrics sink, and the journal a URL names."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar, cast

from fastapi import Depends, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from kjournal.api.keys import KeyRules
from kjournal.journal import Journal, Journals
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics_prometheus import PrometheusMetrics
from kjournal.model import Key
from pydantic import BaseModel, ValidationError

from kjournal_writer.schemas import IdPath, TopicPath
from kjournal_writer.settings import Settings

M = TypeVar("M", bound=BaseModel)


async def get_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def get_journals(request: Request) -> Journals:
    return cast(Journals, request.app.state.journals)


async def get_topics(request: Request) -> TopicPartitions:
    return cast(TopicPartitions, request.app.state.topics)


async def get_metrics(request: Request) -> PrometheusMetrics:
    return cast(PrometheusMetrics, request.app.state.metrics)


async def get_key(request: Request, topic: TopicPath, id: IdPath) -> Key:
    rules = cast(KeyRules, request.app.state.key_rules)
    return rules.key(topic, id)


SettingsDep = Annotated[Settings, Depends(get_settings)]
JournalsDep = Annotated[Journals, Depends(get_journals)]
TopicsDep = Annotated[TopicPartitions, Depends(get_topics)]
MetricsDep = Annotated[PrometheusMetrics, Depends(get_metrics)]
KeyDep = Annotated[Key, Depends(get_key)]


async def get_journal(key: KeyDep, journals: JournalsDep) -> Journal:
    return journals.journal(key)


def journal_of(request: Request, topic: str, id: str) -> Journal:
    """`JournalDep` without the dependency graph, for the append hot path."""
    key = cast(KeyRules, request.app.state.key_rules).key(topic, id)
    return cast(Journals, request.app.state.journals).journal(key)


def metrics_of(request: Request) -> PrometheusMetrics:
    return cast(PrometheusMetrics, request.app.state.metrics)


JournalDep = Annotated[Journal, Depends(get_journal)]


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI `requestBody` for a route that parses its body itself (parse_json_body)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }


async def parse_json_body(request: Request, model: type[M]) -> M:
    """The body as `model`; errors look exactly like FastAPI's own body validation errors."""
    content_type = request.headers.get("content-type", "")
    if "json" not in content_type:
        raise HTTPException(415, f"expected an application/json body, not {content_type!r}")
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        raise RequestValidationError(errors) from None
