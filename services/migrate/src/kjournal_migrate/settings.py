"""The schema job's settings: the Cassandra section the other services read (`KJOURNAL_CASSANDRA__*`),
with the credentials of a role allowed to create and alter the keyspace's tables."""

from __future__ import annotations

from kjournal.cassandra.settings import CassandraSettings
from kjournal_service.settings import ServiceSettings
from pydantic import Field

__all__ = ["Settings"]


class Settings(ServiceSettings):
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
