"""The check: Cassandra compared with the fold of what Kafka still holds, journal by journal, and
the repair of what differs (docs/operations.md).

* `findings.py`: what can differ, and how a result says it;
* `fold.py`: one partition's records folded into the in-memory store with `replicate_partition`
  (what Cassandra should hold), plus what the records say about each journal;
* `compare.py`: one journal's expected state against its stored state (pure);
* `partition.py`: one partition checked against a store snapshot (the Spark task's work, and the
  in-process check's);
* `repair.py`: the writes that turn a stored journal into the expected one, as the replicator's
  plans are written (pure);
* `report.py`: the report, as a table and as JSON.

The driver's side (re-checking what differed while Kafka moved on, repairing, the Spark job)
lives in kjournal_replicator.check.
"""
