"""One module per table: its definition, its CQL statements and its row codec.

`journal`, `metajournal`, `pointer2`, `setting` (schema version 8 of the Scala library) and
`quarantine` (kjournal's own); the statements they prepare take their INSERT, SELECT and DELETE
shapes from `cql`. The eventual reader (reader.py), the replicator's store (writer.py) and the
schema step (schema.py) compose them; no CQL is written anywhere else. The
statements the replicator's store runs are prepared by their table's module too
(`StoreStatements.prepare`), all up front: the store builds statements on the driver's I/O thread,
where a blocking prepare would wait for itself.
"""

from collections.abc import Callable

from cassandra.query import PreparedStatement

Prepare = Callable[[str], PreparedStatement]
"""Prepares one CQL statement (the store's: idempotent, errors translated)."""
