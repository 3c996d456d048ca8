"""The Java Kafka client's default partition for a keyed record.

partition = (murmur2(key) & 0x7fffffff) % partitions, with murmur2 exactly as
org.apache.kafka.common.utils.Utils.murmur2 (seed 0x9747b28c, little-endian 4-byte blocks) and the
mask as Utils.toPositive. All of a journal's records share its key, so they land on one partition
only if every producer (Scala, Python, any client) hashes the same way: aiokafka's
DefaultPartitioner does; librdkafka/confluent-kafka needs `partitioner=murmur2_random`.
"""

from __future__ import annotations

import struct

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK32 = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 as a signed 32-bit int, as Utils.murmur2 returns it."""
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    blocks = length & ~3
    for k in struct.unpack_from(f"<{blocks >> 2}I", data):
        k = (k * _M) & _MASK32
        k ^= k >> 24
        k = (k * _M) & _MASK32
        h = ((h * _M) & _MASK32) ^ k
    tail = length & 3
    if tail:
        if tail == 3:
            h ^= data[blocks + 2] << 16
        if tail >= 2:
            h ^= data[blocks + 1] << 8
        h ^= data[blocks]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


def partition_for(key: bytes, partitions: int) -> int:
    """The partition the Java client's default partitioner sends a record with this key to."""
    if partitions <= 0:
        raise ValueError(f"a topic has at least one partition, got {partitions}")
    return (murmur2(key) & 0x7FFFFFFF) % partitions
