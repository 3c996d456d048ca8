"""The secured platform's principals and their generated passwords, kept in the state directory
(`credentials.json`, mode 0600) for as long as the platform lives. They reach the services as
their `KJOURNAL_KAFKA__SASL_*` and `KJOURNAL_CASSANDRA__USERNAME/PASSWORD` settings and are never
printed: `repr` hides them, and nothing logs them.

Who may do what (docs/security.md has the table):

* Kafka (SCRAM-SHA-512): `kjournal-admin` (super user: topics, ACLs), `kjournal-writer` (write +
  describe journal topics), `kjournal-reader` and `kjournal-replicator` (read + describe),
  `kjournal-expiry` (read + write + describe: it reads tails and produces purges).
* Cassandra: `kjournal_admin` (superuser, replaces the default `cassandra`, which is dropped),
  `kjournal_migrator` (create + alter in the keyspace: the schema step), `kjournal_replicator`
  (select + modify), `kjournal_reader` (select), `kjournal_expiry` (select: it finds expired
  heads; its purges go through Kafka). The writer has no Cassandra role.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

__all__ = [
    "CASSANDRA_ADMIN",
    "CASSANDRA_EXPIRY",
    "CASSANDRA_MIGRATOR",
    "CASSANDRA_READER",
    "CASSANDRA_REPLICATOR",
    "KAFKA_ADMIN",
    "KAFKA_EXPIRY",
    "KAFKA_READER",
    "KAFKA_REPLICATOR",
    "KAFKA_WRITER",
    "Credentials",
]

KAFKA_ADMIN = "kjournal-admin"
KAFKA_WRITER = "kjournal-writer"
KAFKA_READER = "kjournal-reader"
KAFKA_REPLICATOR = "kjournal-replicator"
KAFKA_EXPIRY = "kjournal-expiry"
KAFKA_PRINCIPALS = (KAFKA_ADMIN, KAFKA_WRITER, KAFKA_READER, KAFKA_REPLICATOR, KAFKA_EXPIRY)

CASSANDRA_ADMIN = "kjournal_admin"
CASSANDRA_MIGRATOR = "kjournal_migrator"
CASSANDRA_REPLICATOR = "kjournal_replicator"
CASSANDRA_READER = "kjournal_reader"
CASSANDRA_EXPIRY = "kjournal_expiry"
CASSANDRA_ROLES = (
    CASSANDRA_ADMIN,
    CASSANDRA_MIGRATOR,
    CASSANDRA_REPLICATOR,
    CASSANDRA_READER,
    CASSANDRA_EXPIRY,
)


def _password() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Credentials:
    kafka: dict[str, str] = field(repr=False)  # principal → password
    cassandra: dict[str, str] = field(repr=False)  # role → password

    @classmethod
    def generate(cls) -> Credentials:
        return cls(
            {name: _password() for name in KAFKA_PRINCIPALS},
            {name: _password() for name in CASSANDRA_ROLES},
        )

    @classmethod
    def load(cls, path: Path) -> Credentials | None:
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        return cls(dict(raw["kafka"]), dict(raw["cassandra"]))

    @classmethod
    def load_or_generate(cls, path: Path) -> Credentials:
        """The platform's credentials, generated (and saved) the first time."""
        existing = cls.load(path)
        if existing is not None:
            return existing
        created = cls.generate()
        created.save(path)
        return created

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump({"kafka": self.kafka, "cassandra": self.cassandra}, out, indent=2)
        partial.replace(path)

    def secrets(self) -> list[str]:
        """Every password (to check that none shows up where it must not)."""
        return [*self.kafka.values(), *self.cassandra.values()]
