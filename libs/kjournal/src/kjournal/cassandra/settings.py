"""The Cassandra section of the settings: how to reach the eventual store and where the journal
lives in it.

A plain pydantic model (no environment access here): a service's settings nest it as `cassandra`,
so `KJOURNAL_CASSANDRA__CONTACT_POINTS=10.0.0.1,10.0.0.2` reaches `contact_points`.
"""

from __future__ import annotations

import re
from datetime import UTC
from datetime import timedelta
from datetime import timezone
from datetime import tzinfo
from enum import StrEnum
from typing import Annotated
from typing import Literal
from typing import Self
from zoneinfo import ZoneInfo
from zoneinfo import ZoneInfoNotFoundError

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import SecretStr
from pydantic import field_validator
from pydantic import model_validator

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.model.head import DEFAULT_SEGMENT_SIZE
from kjournal.model.head import MIN_SEGMENT_SIZE
from kjournal.settings_types import CommaSeparated
from kjournal.settings_types import non_empty

__all__ = [
    "CassandraReplication",
    "CassandraSettings",
    "CassandraTables",
    "Consistency",
    "TableNames",
    "time_zone",
    "validate_cql_name",
]

# Unquoted CQL identifiers: Cassandra folds them to lower case and caps names at 48 characters.
_CQL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


def validate_cql_name(value: str) -> str:
    """`value` if it is a valid unquoted CQL keyspace or table name, else ValueError."""
    if not _CQL_NAME.match(value):
        raise ValueError(
            f"invalid Cassandra name {value!r}: use 1 to 48 lower-case letters, digits or '_', "
            "starting with a letter"
        )
    return value


class Consistency(StrEnum):
    """Cassandra consistency levels usable for plain reads and writes."""

    ANY = "ANY"
    ONE = "ONE"
    TWO = "TWO"
    THREE = "THREE"
    QUORUM = "QUORUM"
    ALL = "ALL"
    LOCAL_QUORUM = "LOCAL_QUORUM"
    EACH_QUORUM = "EACH_QUORUM"
    LOCAL_ONE = "LOCAL_ONE"


class CassandraTables(BaseModel):
    """Table names inside the keyspace: the Scala library's (and cassandra-sync's `locks`) and
    kjournal's own (`quarantine`, `conflicts`). Declared and validated here only; `TableNames`
    adds the keyspace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    journal: str = Field(default="journal", description="events, one row per event")
    metajournal: str = Field(default="metajournal", description="journal heads")
    pointer2: str = Field(default="pointer2", description="replicated offset per partition")
    setting: str = Field(default="setting", description="schema versions")
    quarantine: str = Field(default="quarantine", description="records the replicator set aside")
    conflicts: str = Field(
        default="conflicts", description="duplicates that differed from the event kept"
    )
    locks: str = Field(default="locks", description="cassandra-sync's lock table (Scala services)")

    @field_validator(
        "journal", "metajournal", "pointer2", "setting", "quarantine", "conflicts", "locks"
    )
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return validate_cql_name(value)

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        names = [
            self.journal,
            self.metajournal,
            self.pointer2,
            self.setting,
            self.quarantine,
            self.conflicts,
            self.locks,
        ]
        if len(set(names)) != len(names):
            raise ValueError(f"table names must be distinct, got {names}")
        return self


class CassandraReplication(BaseModel):
    """Replication of the keyspace when the schema job creates it (SimpleStrategy RF 1 by default).

    `data_centers` (DC name → replication factor) is required for NetworkTopologyStrategy and
    refused for SimpleStrategy.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: Literal["SimpleStrategy", "NetworkTopologyStrategy"] = Field(
        default="SimpleStrategy",
        description="replication class of a keyspace the schema step creates",
    )
    replication_factor: int = Field(default=1, ge=1, description="SimpleStrategy's factor")
    data_centers: dict[str, int] = Field(
        default_factory=dict,
        description='NetworkTopologyStrategy: data center → factor, e.g. {"dc1": 3}',
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.strategy == "NetworkTopologyStrategy":
            if not self.data_centers:
                raise ValueError("NetworkTopologyStrategy needs data_centers (name → factor)")
            for dc, factor in self.data_centers.items():
                if not re.fullmatch(r"[A-Za-z0-9_.\-]+", dc) or factor < 1:
                    raise ValueError(f"invalid data center entry {dc!r}: {factor}")
        elif self.data_centers:
            raise ValueError("data_centers only apply to NetworkTopologyStrategy")
        return self


class TableNames(CassandraTables):
    """The keyspace and the (unqualified) name of each table: the section's names, with the
    keyspace they live in (what the statements, the reader, the store and the schema step take).
    """

    keyspace: str = "journal"

    @field_validator("keyspace")
    @classmethod
    def _valid_keyspace(cls, value: str) -> str:
        return validate_cql_name(value)

    @classmethod
    def of(cls, keyspace: str, tables: CassandraTables) -> TableNames:
        return cls(keyspace=keyspace, **tables.model_dump())

    def qualified(self, table: str) -> str:
        return f"{self.keyspace}.{table}"


class CassandraSettings(BaseModel):
    """How to reach the eventual store, and where in it the journal lives.

    Consistency defaults to LOCAL_QUORUM for reads and writes, as in the Scala library; on a
    single-node development cluster (RF 1) a local quorum is that one node, so it works unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    contact_points: Annotated[
        tuple[str, ...], CommaSeparated, non_empty("at least one contact point is needed")
    ] = Field(default=("127.0.0.1",), description="nodes to connect to first (comma-separated)")
    port: int = Field(default=9042, ge=1, le=65535, description="CQL native transport port")
    username: str | None = Field(default=None, description="role to log in as (with password)")
    password: SecretStr | None = Field(default=None, description="the role's password")
    local_dc: str | None = Field(
        default=None, description="data center to prefer (none: the driver's default policy)"
    )
    protocol_version: Literal[4, 5] = Field(default=5, description="CQL native protocol")

    keyspace: str = Field(default="journal", description="keyspace holding the journal tables")
    tables: CassandraTables = Field(
        default_factory=CassandraTables, description="table names inside the keyspace"
    )
    replication: CassandraReplication = Field(
        default_factory=CassandraReplication,
        description="keyspace replication when the schema step creates it",
    )
    auto_create_keyspace: bool = Field(
        default=True, description="whether the schema step may create a missing keyspace"
    )

    read_consistency: Consistency = Field(
        default=Consistency.LOCAL_QUORUM, description="consistency of reads"
    )
    write_consistency: Consistency = Field(
        default=Consistency.LOCAL_QUORUM, description="consistency of writes"
    )
    connect_timeout: float = Field(default=10.0, gt=0, description="seconds to open a connection")
    request_timeout: float = Field(default=10.0, gt=0, description="seconds per request")
    fetch_size: int = Field(default=1000, ge=1, description="rows per page of a read")

    segment_size: int = Field(
        default=DEFAULT_SEGMENT_SIZE,
        ge=MIN_SEGMENT_SIZE,
        description="`journal` segment size of journals created from now on (existing ones "
        "keep theirs)",
    )

    expiry_time_zone: str = Field(
        default="UTC",
        description="time zone of the `expire_on` dates the replicator writes: an IANA name "
        "(`Europe/Berlin`) or a fixed offset (`+02:00`). kafka-journal uses its JVM's default "
        "zone; set this to it when the Scala replicators sharing the keyspace do not run in UTC "
        "(docs/cassandra-schema.md)",
    )

    java_version: JavaVersion = Field(
        default=DEFAULT_JAVA_VERSION,
        description="Java release (17, 21 or 25) of the Scala services sharing the keyspace: an "
        "id's `metajournal` bucket hashes its Java lower case, which follows that Java's Unicode "
        "version (docs/cassandra-schema.md)",
    )

    @field_validator("java_version", mode="before")
    @classmethod
    def _java_version_number(cls, value: object) -> object:
        # Environment variables arrive as text; the Literal only accepts the numbers.
        if isinstance(value, str) and value.strip().isdecimal():
            return int(value)
        return value

    @field_validator("expiry_time_zone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        time_zone(value)
        return value

    @field_validator("keyspace")
    @classmethod
    def _valid_keyspace(cls, value: str) -> str:
        return validate_cql_name(value)

    @model_validator(mode="after")
    def _credentials_together(self) -> Self:
        if (self.username is None) != (self.password is None):
            raise ValueError("set both username and password, or neither")
        return self

    @property
    def names(self) -> TableNames:
        """The keyspace and its tables' names."""
        return TableNames.of(self.keyspace, self.tables)

    @property
    def expiry_zone(self) -> tzinfo:
        """`expiry_time_zone` as a tzinfo."""
        return time_zone(self.expiry_time_zone)


_OFFSET = re.compile(r"([+-])(\d{2}):(\d{2})")


def time_zone(name: str) -> tzinfo:
    """The zone an IANA name (`Europe/Berlin`, `UTC`) or a fixed offset (`+02:00`) stands for.

    IANA names need the system's time zone database (or the `tzdata` package), UTC never does.
    """
    if name in ("UTC", "Z"):
        return UTC
    if match := _OFFSET.fullmatch(name):
        sign, hours, minutes = match.groups()
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        if offset > timedelta(hours=18) or int(minutes) >= 60:
            raise ValueError(f"invalid time zone offset {name!r}")
        return timezone(-offset if sign == "-" else offset)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r}: give an IANA name such as Europe/Berlin (the system's "
            "time zone database or the tzdata package must have it) or an offset such as +02:00"
        ) from None
