"""The schema job's settings: the Cassandra section the other services read (`KJOURNAL_CASSANDRA__*`),
with the credentials of a role allowed to create and alter the keyspace's tables."""

from __future__ import annotations

from kjournal.api.settings import ServiceSettings
from kjournal.settings import CassandraSettings
from pydantic import Field

__all__ = ["MigrateSettings"]


class MigrateSettings(ServiceSettings):
    cassandra: CassandraSettings = Field(default_factory=CassandraSettings)
