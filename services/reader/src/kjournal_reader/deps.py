"""Request dependencies (all `async def`: FastAPI runs plain `def` ones in a thread pool, a
thread hop per dependency per request): the open Journals and friends, and the journal or topic a URL names."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Request
from kjournal.api.keys import KeyRules
from kjournal.journal import Journal, Journals
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics_prometheus import PrometheusMetrics
from kjournal.model import Key
from kjournal.ports import EventualReader

from kjournal_reader.eventual import CassandraConnection
from kjournal_reader.replication import ReplicationView
from kjournal_reader.schemas import IdPath, TopicPath
from kjournal_reader.settings import Settings


async def get_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def get_journals(request: Request) -> Journals:
    return cast(Journals, request.app.state.journals)


async def get_topics(request: Request) -> TopicPartitions:
    return cast(TopicPartitions, request.app.state.topics)


async def get_eventual(request: Request) -> EventualReader:
    return cast(EventualReader, request.app.state.eventual)


async def get_cassandra(request: Request) -> CassandraConnection:
    return cast(CassandraConnection, request.app.state.cassandra)


async def get_replication(request: Request) -> ReplicationView:
    return cast(ReplicationView, request.app.state.replication)


async def get_metrics(request: Request) -> PrometheusMetrics:
    return cast(PrometheusMetrics, request.app.state.metrics)


async def get_key(request: Request, topic: TopicPath, id: IdPath) -> Key:
    return cast(KeyRules, request.app.state.key_rules).key(topic, id)


async def get_topic(request: Request, topic: TopicPath) -> str:
    return cast(KeyRules, request.app.state.key_rules).topic(topic)


SettingsDep = Annotated[Settings, Depends(get_settings)]
JournalsDep = Annotated[Journals, Depends(get_journals)]
TopicsDep = Annotated[TopicPartitions, Depends(get_topics)]
EventualDep = Annotated[EventualReader, Depends(get_eventual)]
CassandraDep = Annotated[CassandraConnection, Depends(get_cassandra)]
ReplicationDep = Annotated[ReplicationView, Depends(get_replication)]
MetricsDep = Annotated[PrometheusMetrics, Depends(get_metrics)]
KeyDep = Annotated[Key, Depends(get_key)]
TopicDep = Annotated[str, Depends(get_topic)]


async def get_journal(key: KeyDep, journals: JournalsDep) -> Journal:
    return journals.journal(key)


JournalDep = Annotated[Journal, Depends(get_journal)]
