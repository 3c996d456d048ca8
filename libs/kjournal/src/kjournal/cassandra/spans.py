"""Database client spans of Cassandra requests (OpenTelemetry database semantic conventions):
`<operation> <table>` spans of kind CLIENT with `db.system.name=cassandra`, the keyspace, the
operation, the table and, for prepared statements only, the CQL text, whose values are `?`
placeholders (never values: a query text built with literals is left out).
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from contextlib import nullcontext
from typing import Any

from cassandra.query import BatchStatement
from cassandra.query import BoundStatement
from cassandra.query import PreparedStatement
from opentelemetry.trace import Span
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue

from kjournal.spans import conventions as sem
from kjournal.spans import recording
from kjournal.spans import span
from kjournal.spans import tracer

__all__ = ["cql_attributes", "cql_span", "start_cql_span", "statement_span"]

_NO_SPAN: AbstractContextManager[None] = nullcontext()

_TABLE = re.compile(
    r"^\s*(?P<op>SELECT|INSERT|UPDATE|DELETE)\b(?:.*?\b(?:FROM|INTO))?"
    r"\s+(?:(?P<ks>\w+)\.)?(?P<table>\w+)",
    re.IGNORECASE | re.DOTALL,
)
_known: dict[str, tuple[str, dict[str, AttributeValue]]] = {}


def cql_attributes(statement: Any) -> tuple[str, dict[str, AttributeValue]]:
    """The span name and attributes of a statement (a prepared one's are computed once)."""
    if isinstance(statement, BoundStatement):
        prepared = statement.prepared_statement
    else:  # a PreparedStatement, or kjournal's Binder of one
        prepared = getattr(statement, "prepared", statement)
    if isinstance(prepared, PreparedStatement):
        query = prepared.query_string
        known = _known.get(query)
        if known is None:
            known = _known[query] = _described(query, prepared.keyspace, with_text=True)
        return known
    if isinstance(statement, BatchStatement):
        return "BATCH", {sem.DB_SYSTEM: sem.CASSANDRA, sem.DB_OPERATION: "BATCH"}
    return _described(str(getattr(statement, "query_string", statement)), None, with_text=False)


def _described(
    query: str, keyspace: str | None, *, with_text: bool
) -> tuple[str, dict[str, AttributeValue]]:
    attributes: dict[str, AttributeValue] = {sem.DB_SYSTEM: sem.CASSANDRA}
    found = _TABLE.match(query)
    operation = table = None
    if found is not None:
        operation = found["op"].split()[0].upper()
        table = found["table"]
        keyspace = found["ks"] or keyspace
        attributes[sem.DB_OPERATION] = operation
        attributes[sem.DB_COLLECTION] = table
    if keyspace:
        attributes[sem.DB_NAMESPACE] = keyspace
    if with_text:
        attributes[sem.DB_QUERY_TEXT] = " ".join(query.split())
    name = f"{operation} {table}" if operation and table else (operation or "CQL")
    return name, attributes


def cql_span(
    operation: str,
    table: str,
    keyspace: str | None = None,
    **extra: AttributeValue,
) -> AbstractContextManager[Span | None]:
    """A CLIENT span around Cassandra requests made by hand (several statements, a CQL batch)."""
    attributes: dict[str, AttributeValue] = {
        sem.DB_SYSTEM: sem.CASSANDRA,
        sem.DB_OPERATION: operation,
        sem.DB_COLLECTION: table,
        **extra,
    }
    if keyspace:
        attributes[sem.DB_NAMESPACE] = keyspace
    return span(sem.cql_span(operation, table), SpanKind.CLIENT, attributes)


def start_cql_span(statement: Any) -> Span:
    """A started CLIENT span for one request of `statement` (the caller ends it)."""
    name, attributes = cql_attributes(statement)
    return tracer().start_span(name, kind=SpanKind.CLIENT, attributes=attributes)


def statement_span(statement: Any, **extra: AttributeValue) -> AbstractContextManager[Span | None]:
    """A CLIENT span around the requests of one statement (or of many bindings of it)."""
    if not recording():
        return _NO_SPAN
    name, attributes = cql_attributes(statement)
    return span(name, SpanKind.CLIENT, {**attributes, **extra})
