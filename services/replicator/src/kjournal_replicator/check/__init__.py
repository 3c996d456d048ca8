"""The check job: `kjournal check TOPIC` or `python -m kjournal_replicator.check` (docs/operations.md).

1. **Plan.** Kafka's beginning and end offset of every partition, pointer2, and the journal ids
   Cassandra holds heads of (each assigned to its partition as a writer would).
2. **Pass.** Each partition's records from its beginning to that end, folded and compared with
   Cassandra journal by journal (kjournal.check.partition): as a PySpark batch job reading Kafka
   with the replicator's source, one task per Kafka partition (`task.py`), or in this process for
   a small topic (`--local`).
3. **Re-check.** What differed, compared again in this process against a fresh end offset once
   pointer2 has passed the journal's records (`recheck.py`): a journal appended to while the pass
   ran, or a pointer2 caught mid-slice, is not a difference.
4. **Repair** (`--repair`): what still differs is written over with the replicator's own store
   code, then compared once more (`repair.py`).
"""
