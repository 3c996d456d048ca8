"""Whether Cassandra accepts the configured role and password: a service checks it at start-up,
so a wrong password stops it with one line instead of endless reconnection attempts."""

from __future__ import annotations

import logging

from cassandra import AuthenticationFailed
from cassandra.cluster import NoHostAvailable

from kjournal.cassandra.session import build_cluster
from kjournal.cassandra.settings import CassandraSettings
from kjournal.errors import CredentialsRefused

__all__ = ["check_cassandra_credentials"]


def check_cassandra_credentials(settings: CassandraSettings) -> None:
    """CredentialsRefused if the node refuses the role's password (or the node requires one and
    none is set); nothing if the session opens or no node can be reached. Blocking."""
    driver_log = logging.getLogger("cassandra")
    level = driver_log.level
    driver_log.setLevel(logging.CRITICAL)  # the driver logs the refusal as an error too
    cluster = build_cluster(settings)
    try:
        cluster.connect().shutdown()
    except NoHostAvailable as exc:
        for where, error in (exc.errors or {}).items():
            if isinstance(error, AuthenticationFailed):
                role = settings.username or "(no role: the node requires one)"
                raise CredentialsRefused(
                    f"Cassandra at {where} refused the credentials of role {role!r}"
                ) from None
    except Exception:
        return
    finally:
        cluster.shutdown()
        driver_log.setLevel(level)
