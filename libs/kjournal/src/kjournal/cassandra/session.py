"""cassandra-driver plumbing: Cluster/Session from settings, error translation, the async bridge.

The driver does its I/O on its own thread and hands results to callbacks. Every asynchronous
kjournal call goes through `Pager` (one driver `ResponseFuture` → awaitable pages), so nothing
blocks the event loop and a result is never held in memory beyond one page plus the page being
fetched. The replicator and the schema job use the driver's synchronous API inside
`driver_errors()`.

Execution profiles (never the legacy Cluster arguments, which warn): the default profile reads
(read consistency), `WRITE_PROFILE` writes, `SCHEMA_PROFILE` runs DDL with a long timeout. All
return rows as plain tuples, the cheapest row shape the driver builds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from contextlib import contextmanager
from contextlib import suppress
from typing import Any

from cassandra import ConsistencyLevel
from cassandra import DriverException
from cassandra import OperationTimedOut
from cassandra import RequestValidationException
from cassandra import Timeout
from cassandra import Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT
from cassandra.cluster import Cluster
from cassandra.cluster import ExecutionProfile
from cassandra.cluster import ResponseFuture
from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.connection import ConnectionException
from cassandra.policies import DCAwareRoundRobinPolicy
from cassandra.policies import RetryPolicy
from cassandra.policies import TokenAwarePolicy
from cassandra.protocol import ErrorMessage
from cassandra.protocol import UnauthorizedErrorMessage
from cassandra.query import PreparedStatement
from cassandra.query import Statement
from cassandra.query import tuple_factory
from opentelemetry.trace import Span
from opentelemetry.trace import StatusCode

from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import Consistency
from kjournal.cassandra.spans import start_cql_span
from kjournal.errors import CassandraUnavailable
from kjournal.errors import DeadlineExceeded
from kjournal.errors import KJournalError
from kjournal.errors import SchemaError
from kjournal.spans import conventions as sem
from kjournal.spans import recording

__all__ = [
    "READ_PROFILE",
    "SCHEMA_PROFILE",
    "WRITE_PROFILE",
    "Pager",
    "Row",
    "build_cluster",
    "connect",
    "driver_errors",
    "execution_profiles",
    "first_page",
    "open_session",
    "prepare",
    "read_concurrently",
    "translate_error",
]

log = logging.getLogger(__name__)

READ_PROFILE: Any = EXEC_PROFILE_DEFAULT
WRITE_PROFILE = "kjournal-write"
SCHEMA_PROFILE = "kjournal-schema"

_SCHEMA_TIMEOUT = 120.0

Row = tuple[Any, ...]


def _consistency(level: Consistency) -> int:
    return int(getattr(ConsistencyLevel, level.value))


def execution_profiles(settings: CassandraSettings) -> dict[Any, ExecutionProfile]:
    def profile(consistency: Consistency, timeout: float) -> ExecutionProfile:
        return ExecutionProfile(
            load_balancing_policy=TokenAwarePolicy(
                DCAwareRoundRobinPolicy(local_dc=settings.local_dc or "")
            ),
            retry_policy=RetryPolicy(),
            consistency_level=_consistency(consistency),
            request_timeout=timeout,
            row_factory=tuple_factory,
        )

    return {
        READ_PROFILE: profile(settings.read_consistency, settings.request_timeout),
        WRITE_PROFILE: profile(settings.write_consistency, settings.request_timeout),
        SCHEMA_PROFILE: profile(
            settings.write_consistency, max(settings.request_timeout, _SCHEMA_TIMEOUT)
        ),
    }


def build_cluster(settings: CassandraSettings) -> Cluster:
    """A Cluster (not yet connected) configured from `settings`."""
    auth = None
    if settings.username is not None and settings.password is not None:
        auth = PlainTextAuthProvider(settings.username, settings.password.get_secret_value())
    return Cluster(
        contact_points=list(settings.contact_points),
        port=settings.port,
        protocol_version=settings.protocol_version,
        execution_profiles=execution_profiles(settings),
        auth_provider=auth,
        connect_timeout=settings.connect_timeout,
    )


def connect(settings: CassandraSettings) -> Session:
    """A connected session (blocking). Shut it down with `session.cluster.shutdown()`."""
    cluster = build_cluster(settings)
    try:
        with driver_errors("connecting to Cassandra"):
            session = cluster.connect()
    except BaseException:
        cluster.shutdown()
        raise
    session.default_fetch_size = settings.fetch_size
    return session


@asynccontextmanager
async def open_session(settings: CassandraSettings) -> AsyncIterator[Session]:
    """Connect without blocking the loop; shut the cluster down on exit."""
    session = await asyncio.to_thread(connect, settings)
    try:
        yield session
    finally:
        await asyncio.to_thread(session.cluster.shutdown)


def translate_error(exc: BaseException, what: str) -> KJournalError | None:
    """The kjournal error for a driver error (None if `exc` is not the driver's)."""
    if isinstance(exc, Timeout | OperationTimedOut):
        return DeadlineExceeded(f"{what}: Cassandra did not answer in time: {exc}")
    if isinstance(exc, Unauthorized | UnauthorizedErrorMessage):
        return CassandraUnavailable(f"{what}: Cassandra refused access: {exc}")
    if isinstance(exc, RequestValidationException):
        return SchemaError(f"{what}: Cassandra rejected the statement: {exc}")
    if isinstance(exc, DriverException | ErrorMessage | ConnectionException) or type(
        exc
    ).__module__.startswith("cassandra."):
        return CassandraUnavailable(f"{what}: {type(exc).__name__}: {exc}")
    return None


@contextmanager
def driver_errors(what: str) -> Iterator[None]:
    """Re-raise driver errors inside the block as kjournal errors, chained."""
    try:
        yield
    except KJournalError:
        raise
    except Exception as exc:
        translated = translate_error(exc, what)
        if translated is None:
            raise
        raise translated from exc


def read_concurrently(
    session: Session,
    statement: PreparedStatement,
    args: Sequence[tuple[Any, ...]],
    concurrency: int,
) -> list[list[Any]]:
    """The rows of `statement` bound to each of `args`, in their order, with `concurrency`
    requests in flight (read profile); the first error is raised."""
    results = execute_concurrent_with_args(
        session, statement, args, concurrency=concurrency, execution_profile=READ_PROFILE
    )
    return [list(result) for _, result in results]


async def prepare(session: Session, cql: str) -> PreparedStatement:
    """Prepare off the loop (the driver only offers a blocking prepare)."""

    def run() -> PreparedStatement:
        with driver_errors(f"preparing {cql!r}"):
            return session.prepare(cql)

    return await asyncio.to_thread(run)


class Pager:
    """The pages of one statement's result, fetched one after the other as they are awaited.

    The request starts at construction (so several pagers can be in flight at once). After a page
    arrives the next one is requested immediately, while the caller works on the current one: at
    most two pages are ever held. With tracing on, each page is a CLIENT span (`SELECT <table>`)
    from its request to its arrival, with the rows it brought.
    """

    __slots__ = ("_exhausted", "_future", "_loop", "_span", "_statement", "_waiter", "_what")

    def __init__(
        self,
        session: Session,
        statement: Statement | str,
        params: Sequence[Any] | None = None,
        *,
        what: str,
        profile: Any = READ_PROFILE,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._what = what
        self._exhausted = False
        self._waiter: asyncio.Future[Sequence[Row]] = self._loop.create_future()
        self._statement = statement
        self._span: Span | None = start_cql_span(statement) if recording() else None
        with driver_errors(what):
            self._future: ResponseFuture = session.execute_async(
                statement, params, execution_profile=profile
            )
        self._future.add_callbacks(self._on_page, self._on_error)

    # Driver callbacks run on the driver's thread: hop onto the loop.
    def _on_page(self, rows: Sequence[Row] | None) -> None:
        self._post(self._deliver, rows if rows is not None else ())

    def _on_error(self, exc: BaseException) -> None:
        self._post(self._fail, exc)

    def _post(self, fn: Any, arg: Any) -> None:
        with suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(fn, arg)

    def _deliver(self, rows: Sequence[Row]) -> None:
        if not self._waiter.done():
            self._waiter.set_result(rows)

    def _fail(self, exc: BaseException) -> None:
        if not self._waiter.done():
            self._waiter.set_exception(exc)

    async def next_page(self) -> Sequence[Row] | None:
        """The next page (possibly empty), or None once the result is exhausted."""
        if self._exhausted:
            return None
        try:
            rows = await self._waiter
        except BaseException as exc:
            self._end_span(exc)
            if isinstance(exc, KJournalError) or not isinstance(exc, Exception):
                raise
            self._exhausted = True
            translated = translate_error(exc, self._what)
            if translated is None:
                raise
            raise translated from exc
        if self._span is not None:
            self._span.set_attribute(sem.DB_RETURNED_ROWS, len(rows))
            self._end_span(None)
        if self._future.has_more_pages:
            self._waiter = self._loop.create_future()
            if recording():
                self._span = start_cql_span(self._statement)
            with driver_errors(self._what):
                self._future.start_fetching_next_page()
        else:
            self._exhausted = True
        return rows

    def _end_span(self, error: BaseException | None) -> None:
        span, self._span = self._span, None
        if span is None:
            return
        if isinstance(error, Exception):
            span.record_exception(error)
            span.set_status(StatusCode.ERROR, type(error).__name__)
        span.end()

    async def rows(self) -> AsyncIterator[Row]:
        while (page := await self.next_page()) is not None:
            for row in page:
                yield row

    def close(self) -> None:
        """Stop paging; a page in flight is dropped when it arrives."""
        self._exhausted = True
        self._future.clear_callbacks()
        self._end_span(None)
        if not self._waiter.done():
            self._waiter.cancel()


async def first_page(
    session: Session,
    statement: Statement | str,
    params: Sequence[Any] | None = None,
    *,
    what: str,
    profile: Any = READ_PROFILE,
) -> Sequence[Row]:
    """The first page of a result: for statements known to return at most a few rows."""
    pager = Pager(session, statement, params, what=what, profile=profile)
    try:
        page = await pager.next_page()
    finally:
        pager.close()
    return page or ()
