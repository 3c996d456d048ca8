"""Replicating one Kafka partition's slice of records into the eventual store (docs/replication.md).

`slice.py` holds the algorithm (`replicate_partition`, its steps numbered); `collect.py` gathers
and decodes a slice's records by journal; `planner.py` plans one journal's part, a pure function;
`dropped.py` sorts the appends the append rule drops into replays, refusals and conflicts;
`quarantine.py` writes poison records and parks what follows them.
"""

from kjournal.replicate.slice import ReplicationResult
from kjournal.replicate.slice import replicate_partition

__all__ = ["ReplicationResult", "replicate_partition"]
