"""Where replication starts, and the check that no offset is ever jumped over.

Without a checkpoint the query starts every known partition of every matching topic right after
its pointer2 (the last offset Cassandra holds), or at the earliest offset when there is none: the
replicator picks up where any earlier replicator (this one, or the Scala one) stopped. With a
checkpoint Spark resumes from it and ignores `startingOffsets`. Partitions Spark discovers later
(a new topic, more partitions) start at their earliest offset.

Spark requires `startingOffsets` to list every partition of every topic it assigns, so a topic
created between our listing and Spark's fails the start (loudly); a restart lists it.

The gap check runs before every micro-batch: a Kafka range starting past pointer2 + 1 would
leave offsets that were never replicated behind for good (a checkpoint reused with another
keyspace, Cassandra restored from an older backup or having lost its last writes, records deleted
by retention before they were replicated). Journal topics are written without transactions and
never compacted, so their offsets are dense and any gap is real. The micro-batch handler reads a
gap's offsets from Kafka again before the batch (micro_batch.py); only offsets Kafka no longer
holds are lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlparse

from kjournal_replicator.ranges import OffsetRange

__all__ = [
    "EARLIEST",
    "Pointer2",
    "checkpoint_has_offsets",
    "describe_gap",
    "find_gaps",
    "starting_offsets",
]

EARLIEST = -2  # Spark's startingOffsets code for "the earliest offset Kafka holds"

Pointer2 = Callable[[str, int], int | None]


def checkpoint_has_offsets(location: str) -> bool | None:
    """Whether the checkpoint at `location` holds offsets Spark resumes from (a local path or
    `file:` URL); None for another file system, which this process cannot look into."""
    url = urlparse(location)
    if url.scheme not in ("", "file"):
        return None
    offsets = Path(url.path if url.scheme else location) / "offsets"
    return offsets.is_dir() and any(offsets.iterdir())


def starting_offsets(partitions: dict[str, list[int]], pointer2: Pointer2) -> str:
    """The Kafka source's `startingOffsets` option: JSON per topic and partition."""
    spec: dict[str, dict[str, int]] = {}
    for topic, numbers in sorted(partitions.items()):
        if not numbers:
            continue
        offsets: dict[str, int] = {}
        for partition in numbers:
            last = pointer2(topic, partition)
            offsets[str(partition)] = EARLIEST if last is None else last + 1
        spec[topic] = offsets
    return json.dumps(spec, sort_keys=True) if spec else "earliest"


def find_gaps(ranges: Iterable[OffsetRange], pointer2: Pointer2) -> list[OffsetRange]:
    """For each non-empty range that starts past its partition's pointer2 + 1, the offsets in
    between: never replicated, and jumped over if the range were applied as planned."""
    gaps = []
    for offsets in ranges:
        if offsets.size <= 0:
            continue
        last = pointer2(offsets.topic, offsets.partition)
        next_offset = 0 if last is None else last + 1
        if offsets.from_offset > next_offset:
            gaps.append(
                OffsetRange(offsets.topic, offsets.partition, next_offset, offsets.from_offset)
            )
    return gaps


def describe_gap(gap: OffsetRange) -> str:
    return (
        f"{gap.topic}:{gap.partition} offsets {gap.from_offset}..{gap.until_offset - 1} "
        f"(pointer2 {gap.from_offset - 1 if gap.from_offset else None}, the micro-batch starts "
        f"at {gap.until_offset})"
    )
