"""The statement shapes the table modules write their CQL with: `table` keyspace-qualified,
values bound with `?` markers."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["delete", "insert", "select"]


def insert(table: str, columns: Sequence[str]) -> str:
    """A row of `columns`, bound in their order."""
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


def select(table: str, columns: str | Sequence[str], where: str = "") -> str:
    """`columns` (a list, or CQL such as `DISTINCT topic, id`); `where`, all that follows WHERE
    (a LIMIT or ALLOW FILTERING too), none if empty."""
    listed = columns if isinstance(columns, str) else ", ".join(columns)
    return f"SELECT {listed} FROM {table}" + (f" WHERE {where}" if where else "")


def delete(table: str, where: str) -> str:
    return f"DELETE FROM {table} WHERE {where}"
