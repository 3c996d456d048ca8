"""The secured Cassandra node: PasswordAuthenticator, CassandraAuthorizer and roles with the least
each part needs, set up by `secure_schema` (which replaces the plain platform's schema step):

1. the node's default superuser `cassandra` creates `kjournal_admin`, which then drops
   `cassandra` (its password is public knowledge);
2. `kjournal_admin` creates the keyspace and the login roles, and lets `kjournal_migrator`
   create and alter tables in it;
3. `kjournal_migrator` runs the schema migrations; Cassandra gives the creator of a table every
   permission on it, so `kjournal_admin` then takes them back, leaving SELECT + MODIFY on the
   `setting` table (where the schema version is recorded);
4. `kjournal_admin` grants `kjournal_replicator` SELECT on the keyspace and MODIFY on the tables
   it writes (not `setting` nor `locks`), and `kjournal_reader` and `kjournal_expiry` SELECT on
   the keyspace (the expiry job purges through Kafka, never in Cassandra).

Every step can run again: a restarted platform finds the roles and grants in place.
"""

from __future__ import annotations

import logging
import time

from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.errors import CassandraUnavailable
from kjournal.errors import CredentialsRefused
from pydantic import SecretStr

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.security.credentials import CASSANDRA_ADMIN
from kjournal_dev.security.credentials import CASSANDRA_EXPIRY
from kjournal_dev.security.credentials import CASSANDRA_MIGRATOR
from kjournal_dev.security.credentials import CASSANDRA_READER
from kjournal_dev.security.credentials import CASSANDRA_REPLICATOR
from kjournal_dev.security.credentials import Credentials

__all__ = [
    "DEFAULT_SUPERUSER",
    "YAML",
    "client_env",
    "replicator_tables",
    "role_settings",
    "secure_schema",
]

log = logging.getLogger(__name__)

YAML = """authenticator: PasswordAuthenticator
authorizer: CassandraAuthorizer
role_manager: CassandraRoleManager
"""
DEFAULT_SUPERUSER = ("cassandra", "cassandra")


def role_settings(config: DevConfig, role: str, password: str, **more: object) -> CassandraSettings:
    return CassandraSettings.model_validate(
        {
            "contact_points": (config.host,),
            "port": config.cassandra_port,
            "username": role,
            "password": SecretStr(password),
            "keyspace": config.keyspace,
            **more,
        }
    )


def client_env(role: str, credentials: Credentials) -> dict[str, str]:
    """A service's `KJOURNAL_CASSANDRA__USERNAME/PASSWORD` for `role`."""
    return {
        "KJOURNAL_CASSANDRA__USERNAME": role,
        "KJOURNAL_CASSANDRA__PASSWORD": credentials.cassandra[role],
    }


def _quoted(password: str) -> str:
    return "'" + password.replace("'", "''") + "'"


def _admin_session_settings(config: DevConfig, credentials: Credentials) -> CassandraSettings:
    return role_settings(config, CASSANDRA_ADMIN, credentials.cassandra[CASSANDRA_ADMIN])


def _create_admin(config: DevConfig, credentials: Credentials, timeout_s: float) -> None:
    """Log in as the default superuser (the node creates it just after it starts listening),
    create kjournal_admin; done already if kjournal_admin can log in."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            connect(_admin_session_settings(config, credentials)).cluster.shutdown()
            return  # set up before
        except (CassandraUnavailable, CredentialsRefused):
            pass
        user, password = DEFAULT_SUPERUSER
        try:
            session = connect(role_settings(config, user, password))
        except CassandraUnavailable:
            if time.monotonic() > deadline:
                raise DevError(
                    "Cassandra's default superuser never became usable, and kjournal_admin "
                    f"cannot log in either (within {timeout_s:g} s)"
                ) from None
            time.sleep(1)
            continue
        try:
            admin = credentials.cassandra[CASSANDRA_ADMIN]
            session.execute(
                f"CREATE ROLE IF NOT EXISTS {CASSANDRA_ADMIN} WITH SUPERUSER = true "
                f"AND LOGIN = true AND PASSWORD = {_quoted(admin)}"
            )
        finally:
            session.cluster.shutdown()
        return


def replicator_tables(names: TableNames) -> tuple[str, ...]:
    """The tables the replicator writes: events, heads, offsets, quarantine and conflicts."""
    return (names.journal, names.metajournal, names.pointer2, names.quarantine, names.conflicts)


def _tables(names: TableNames) -> tuple[str, ...]:
    return (*replicator_tables(names), names.setting, names.locks)


def secure_schema(config: DevConfig, credentials: Credentials, timeout_s: float = 120) -> int:
    """Roles, keyspace, schema and grants (steps 1-4 above); the schema version now recorded."""
    _create_admin(config, credentials, timeout_s)
    admin = connect(_admin_session_settings(config, credentials))
    keyspace = config.keyspace
    try:
        admin.execute(f"DROP ROLE IF EXISTS {DEFAULT_SUPERUSER[0]}")
        for role in (CASSANDRA_MIGRATOR, CASSANDRA_REPLICATOR, CASSANDRA_READER, CASSANDRA_EXPIRY):
            password = _quoted(credentials.cassandra[role])
            admin.execute(
                f"CREATE ROLE IF NOT EXISTS {role} WITH LOGIN = true AND PASSWORD = {password}"
            )
        admin.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        admin.execute(f"GRANT CREATE ON KEYSPACE {keyspace} TO {CASSANDRA_MIGRATOR}")
        admin.execute(f"GRANT ALTER ON KEYSPACE {keyspace} TO {CASSANDRA_MIGRATOR}")
        migrator = connect(
            role_settings(config, CASSANDRA_MIGRATOR, credentials.cassandra[CASSANDRA_MIGRATOR])
        )
        schema = CassandraSettings(keyspace=keyspace)
        try:
            version = migrate(migrator, schema)
        finally:
            migrator.cluster.shutdown()
        names = schema.names
        for table in _tables(names):
            admin.execute(f"REVOKE ALL ON TABLE {keyspace}.{table} FROM {CASSANDRA_MIGRATOR}")
        for permission in ("SELECT", "MODIFY"):
            admin.execute(
                f"GRANT {permission} ON TABLE {keyspace}.{names.setting} TO {CASSANDRA_MIGRATOR}"
            )
        admin.execute(f"GRANT SELECT ON KEYSPACE {keyspace} TO {CASSANDRA_REPLICATOR}")
        for table in replicator_tables(names):
            admin.execute(f"GRANT MODIFY ON TABLE {keyspace}.{table} TO {CASSANDRA_REPLICATOR}")
        admin.execute(f"GRANT SELECT ON KEYSPACE {keyspace} TO {CASSANDRA_READER}")
        admin.execute(f"GRANT SELECT ON KEYSPACE {keyspace} TO {CASSANDRA_EXPIRY}")
        return version
    finally:
        admin.cluster.shutdown()
