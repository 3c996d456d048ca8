"""`python -m kjournal_migrate`: apply the schema to `KJOURNAL_CASSANDRA__KEYSPACE` and exit.

Exit status: 0 when the keyspace holds the current schema, 1 when migrating failed (the reason on
one log line), 2 for invalid settings. Safe to run again: every step is idempotent.
"""

from __future__ import annotations

import logging
import sys
import time

from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.errors import KJournalError
from kjournal_service.logs import configure_job_logging
from pydantic import ValidationError

from kjournal_migrate.settings import Settings

log = logging.getLogger("kjournal_migrate")


def main() -> int:
    configure_job_logging(
        sys.stdout, quiet=("cassandra",), fmt="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    # The driver logs its own ERROR when it cannot connect; ours below says it in one line.
    logging.getLogger("cassandra.cluster").setLevel(logging.CRITICAL)
    try:
        settings = Settings()
    except ValidationError as exc:
        log.error("invalid settings: %s", exc)
        return 2
    cassandra = settings.cassandra
    started = time.monotonic()
    where = f"{','.join(cassandra.contact_points)}:{cassandra.port}"
    try:
        session = connect(cassandra)
    except KJournalError as exc:
        log.error("cannot connect to Cassandra at %s: %s", where, exc)
        return 1
    try:
        version = migrate(session, cassandra)
    except KJournalError as exc:
        log.error("migrating keyspace %s at %s failed: %s", cassandra.keyspace, where, exc)
        return 1
    finally:
        session.cluster.shutdown()
    log.info(
        "keyspace %s at %s holds schema version %s (%.1f s)",
        cassandra.keyspace,
        where,
        version,
        time.monotonic() - started,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
