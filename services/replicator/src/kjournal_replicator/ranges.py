"""The Kafka offset ranges a micro-batch will read, one per Spark partition, checked before applying.

`replicate_partition` must see a Kafka partition's records in offset order and in one call: two
tasks applying two halves of one partition concurrently could skip events (the later half moves a
journal's head past the earlier half) and move pointer2 over offsets not yet applied. Spark's
Kafka source plans one input partition per Kafka partition as long as `minPartitions` and
`maxRecordsPerPartition` are unset (settings.py refuses both), and the DataFrame handed to
foreachBatch keeps that partitioning. Here the driver reads the planned ranges from the batch's
RDD lineage (through py4j, no data moved) and refuses a micro-batch where a Kafka partition appears in
more than one Spark partition. The ranges also tell which partitions a micro-batch must report on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kjournal.errors import MicroBatchError
from pyspark.sql import DataFrame

__all__ = ["OffsetRange", "micro_batch_ranges"]

_SOURCE_RDD = "org.apache.spark.sql.execution.datasources.v2.DataSourceRDD"
_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True, order=True)
class OffsetRange:
    topic: str
    partition: int
    from_offset: int  # inclusive
    until_offset: int  # exclusive

    @property
    def size(self) -> int:
        return self.until_offset - self.from_offset


def _lineage(rdd: Any) -> Iterator[Any]:
    todo = [(rdd, 0)]
    while todo:
        current, depth = todo.pop()
        yield current
        if depth >= _MAX_DEPTH:
            continue
        dependencies = current.dependencies().iterator()
        while dependencies.hasNext():
            todo.append((dependencies.next().rdd(), depth + 1))


def _scala_items(seq: Any) -> Iterator[Any]:
    iterator = seq.iterator()
    while iterator.hasNext():
        yield iterator.next()


def micro_batch_ranges(batch: DataFrame) -> list[tuple[int, OffsetRange]]:
    """(Spark partition index, Kafka offset range) for each planned partition of `batch`.

    Raises MicroBatchError if the lineage holds no Kafka source RDD, a Spark partition reads anything
    but exactly one Kafka range, or a Kafka partition is split over several Spark partitions.
    """
    # The batch DataFrame of foreachBatch wraps the source's RDD (LogicalRDD); execute() on its
    # physical plan returns that RDD (mapped), without running anything.
    jrdd = batch._jdf.queryExecution().executedPlan().execute()
    source = next((rdd for rdd in _lineage(jrdd) if rdd.getClass().getName() == _SOURCE_RDD), None)
    if source is None:
        raise MicroBatchError("the micro-batch does not read from the Kafka source RDD")
    planned: list[tuple[int, OffsetRange]] = []
    for spark_partition in source.partitions():
        inputs = list(_scala_items(spark_partition.inputPartitions()))
        if len(inputs) != 1:
            raise MicroBatchError(
                f"Spark partition {spark_partition.index()} reads {len(inputs)} Kafka ranges"
            )
        offsets = inputs[0].offsetRange()
        topic_partition = offsets.topicPartition()
        planned.append(
            (
                spark_partition.index(),
                OffsetRange(
                    topic_partition.topic(),
                    topic_partition.partition(),
                    offsets.fromOffset(),
                    offsets.untilOffset(),
                ),
            )
        )
    counts = Counter((r.topic, r.partition) for _, r in planned)
    split = sorted(f"{topic}:{partition}" for (topic, partition), n in counts.items() if n > 1)
    if split:
        raise MicroBatchError(
            f"Kafka partitions {', '.join(split)} are split over several Spark partitions: "
            "unset the Kafka source options minPartitions and maxRecordsPerPartition"
        )
    return planned
