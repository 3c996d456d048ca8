"""Request dependencies both services use (all `async def`: FastAPI runs plain `def` ones in a
thread pool, a thread hop per dependency per request): what every service's state holds
(`kjournal_service.state`), and the key or topic a URL names. The journals are each service's own
(its deps.py): the writer's and the reader's are not the same facade."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated
from typing import get_args
from typing import get_origin

from fastapi import Depends
from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from kjournal.kafka.topics import TopicPartitions
from kjournal.model import Key

from kjournal_service.metrics_prometheus import PrometheusMetrics
from kjournal_service.params import IdPath
from kjournal_service.params import TopicPath
from kjournal_service.settings import HttpSettings
from kjournal_service.state import ServiceState

__all__ = [
    "HttpDep",
    "KeyDep",
    "MetricsDep",
    "TopicDep",
    "TopicsDep",
    "check_query",
    "known_query",
]


async def get_http(request: Request) -> HttpSettings:
    return ServiceState.of(request.app).http


async def get_topics(request: Request) -> TopicPartitions:
    return ServiceState.of(request.app).topics


async def get_metrics(request: Request) -> PrometheusMetrics:
    return ServiceState.of(request.app).metrics


async def get_key(request: Request, topic: TopicPath, id: IdPath) -> Key:
    return ServiceState.of(request.app).key_rules.key(topic, id)


async def get_topic(request: Request, topic: TopicPath) -> str:
    return ServiceState.of(request.app).key_rules.topic(topic)


HttpDep = Annotated[HttpSettings, Depends(get_http)]
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
