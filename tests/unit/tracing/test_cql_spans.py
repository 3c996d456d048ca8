"""Cassandra spans are named and described from the statement, never from values."""

from __future__ import annotations

import pytest
from cassandra.query import BatchStatement
from cassandra.query import BoundStatement
from cassandra.query import PreparedStatement
from cassandra.query import SimpleStatement
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.spans import cql_attributes
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.cassandra.statements import pointer2

TABLES = TableNames(keyspace="orders")


def _prepared(cql: str) -> PreparedStatement:
    return PreparedStatement([], b"id", [], cql, "orders", 5, [], b"meta")


@pytest.mark.parametrize(
    ("cql", "name"),
    [
        (pointer2.select_cql(TABLES), "SELECT pointer2"),
        (pointer2.update_cql(TABLES), "UPDATE pointer2"),
        (pointer2.insert_cql(TABLES), "INSERT pointer2"),
        (journal.select_cql(TABLES), "SELECT journal"),
        (journal.delete_segment_cql(TABLES), "DELETE journal"),
        (metajournal.heads_select_cql(TABLES), "SELECT metajournal"),
    ],
)
def test_a_prepared_statement_names_its_operation_and_table(cql: str, name: str) -> None:
    span_name, attributes = cql_attributes(_prepared(cql))
    assert span_name == name
    operation, table = name.split()
    assert attributes == {
        "db.system.name": "cassandra",
        "db.operation.name": operation,
        "db.collection.name": table,
        "db.namespace": "orders",
        "db.query.text": " ".join(cql.split()),
    }
    assert "?" in str(attributes["db.query.text"])


def test_a_bound_statement_is_described_by_its_prepared_one() -> None:
    prepared = _prepared("SELECT offset FROM orders.pointer2 WHERE topic = ? AND partition = ?")
    assert cql_attributes(BoundStatement(prepared))[0] == "SELECT pointer2"


def test_the_text_of_a_statement_with_values_in_it_is_never_recorded() -> None:
    name, attributes = cql_attributes(
        SimpleStatement("SELECT * FROM orders.journal WHERE id = 'secret-customer'")
    )
    assert name == "SELECT journal"
    assert "db.query.text" not in attributes
    assert cql_attributes(BatchStatement())[0] == "BATCH"
