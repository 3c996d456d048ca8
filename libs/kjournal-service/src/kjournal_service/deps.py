"""Request dependencies both services use (all `async def`: FastAPI runs plain `def` ones in a
thread pool, a thread hop per dependency per request): what the app state holds (set by
`app.service_app` and the service's lifespan), and the journal or topic a URL names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, cast, get_args, get_origin

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from kjournal.api.keys import KeyRules
from kjournal.journal import Journal, Journals
from kjournal.kafka.topics import TopicPartitions
from kjournal.model import Key

from kjournal_service.metrics_prometheus import PrometheusMetrics
from kjournal_service.params import IdPath, TopicPath
from kjournal_service.settings import HttpSettings

__all__ = [
    "HttpDep",
    "JournalDep",
    "JournalsDep",
    "KeyDep",
    "MetricsDep",
    "TopicDep",
    "TopicsDep",
    "get_journal",
    "journal_of",
    "metrics_of",
]


def journal_of(request: Request, topic: str, id: str) -> Journal:
    """`JournalDep` without the dependency graph, for a hot path."""
    key = cast(KeyRules, request.app.state.key_rules).key(topic, id)
    return cast(Journals, request.app.state.journals).journal(key)


def metrics_of(request: Request) -> PrometheusMetrics:
    return cast(PrometheusMetrics, request.app.state.metrics)


async def get_http(request: Request) -> HttpSettings:
    return cast(HttpSettings, request.app.state.settings.http)


async def get_journals(request: Request) -> Journals:
    return cast(Journals, request.app.state.journals)


async def get_topics(request: Request) -> TopicPartitions:
    return cast(Journals, request.app.state.journals).topics


async def get_metrics(request: Request) -> PrometheusMetrics:
    return metrics_of(request)


async def get_key(request: Request, topic: TopicPath, id: IdPath) -> Key:
    return cast(KeyRules, request.app.state.key_rules).key(topic, id)


async def get_topic(request: Request, topic: TopicPath) -> str:
    return cast(KeyRules, request.app.state.key_rules).topic(topic)


HttpDep = Annotated[HttpSettings, Depends(get_http)]
JournalsDep = Annotated[Journals, Depends(get_journals)]
TopicsDep = Annotated[TopicPartitions, Depends(get_topics)]
MetricsDep = Annotated[PrometheusMetrics, Depends(get_metrics)]
KeyDep = Annotated[Key, Depends(get_key)]
TopicDep = Annotated[str, Depends(get_topic)]


def check_query(request: Request) -> None:
    """Refuse a query parameter the route does not take (`?form=3` for `from`) or one given twice
    (`?to=1&to=2`): ignoring it, or keeping one of two values, would act on a guess."""
    names = [name for name, _ in request.query_params.multi_items()]
    if not names:
        return
    known = _query_names(request.scope.get("route"))
    errors = [
        {"type": "value_error", "loc": ("query", name), "msg": "not a parameter of this route"}
        for name in sorted(set(names) - known)
    ]
    repeatable = _query_names(request.scope.get("route"), lists=True)
    errors += [
        {"type": "value_error", "loc": ("query", name), "msg": "given more than once"}
        for name in sorted({name for name in names if names.count(name) > 1} & known - repeatable)
    ]
    if errors:
        raise RequestValidationError(errors)


async def known_query(request: Request) -> None:
    """check_query as an app-wide FastAPI dependency."""
    check_query(request)


def _dependant_query_names(dependant: Dependant, lists: bool = False) -> Iterator[str]:
    """The query parameters' names (`lists`: only those that take a list, given repeatedly)."""
    for param in dependant.query_params:
        if not lists or _takes_list(param.field_info.annotation):
            yield param.alias
    for dependency in dependant.dependencies:
        yield from _dependant_query_names(dependency, lists)


def _takes_list(annotation: object) -> bool:
    if get_origin(annotation) is list:
        return True
    return any(get_origin(arg) is list for arg in get_args(annotation))


_query_names_by_route: dict[tuple[int, bool], frozenset[str]] = {}  # routes live as their app


def _query_names(route: object, lists: bool = False) -> frozenset[str]:
    """The route's query parameters (`lists`: those that may repeat)."""
    if not isinstance(route, APIRoute):
        return frozenset()
    names = _query_names_by_route.get((id(route), lists))
    if names is None:
        names = _query_names_by_route[(id(route), lists)] = frozenset(
            _dependant_query_names(route.dependant, lists)
        )
    return names


async def get_journal(key: KeyDep, journals: JournalsDep) -> Journal:
    return journals.journal(key)


JournalDep = Annotated[Journal, Depends(get_journal)]
