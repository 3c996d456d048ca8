"""One module per table: its definition, its CQL statements and its row codec.

`journal`, `metajournal`, `pointer2`, `setting` (schema version 8 of the Scala library) and
`quarantine` (kjournal's own). The eventual reader (reader.py), the replicator's store
(writer.py) and the schema step (schema.py) compose them; no CQL is written anywhere else.
"""
