"""The order an event's tags are written in: the order a Scala service iterates the same set in.

Tags are a set; the wire formats write them as a list, and kafka-journal writes the iteration
order of its `Set[String]`. Scala 2.13's immutable sets (Scala 3 uses the same library) iterate:

* up to 4 elements (`Set1`..`Set4`): in insertion order, which the set's contents do not
  determine. kjournal writes them sorted (by code point), the order a Scala service gets for a
  set it read back from Cassandra (`set<text>` comes sorted and is inserted in that order);
* 5 or more (`HashSet`, a CHAMP trie): in an order that is a function of the elements' Java
  hash codes, emulated here. Strings with one and the same hash code keep their insertion order
  in Scala; here they come sorted among themselves (Scala's order when inserted sorted).

So a record kjournal writes is byte for byte the record kafka-journal writes for the same events
whenever no two tags share a hash code and the Scala set of ≤ 4 tags was built in sorted order
(tests/fixtures/wire/README.md). Decoding never depends on the order.

CHAMP iteration, from scala/collection/immutable/HashSet.scala and ChampCommon.scala: the key
is `improve(hashCode)`; a node takes 5 bits of it per level, lowest bits first; at a node,
elements alone under their 5 bits are its data entries, iterated first in ascending order of
those bits, then the sub-nodes of the groups sharing them, in the same order, each depth first;
below the last level (32 bits used) is a collision node.
"""

from __future__ import annotations

from kjournal.wire.java_hash import java_string_hash

__all__ = ["scala_tag_order"]

_SMALL_SET = 4  # Set1..Set4: insertion order
_PARTITION_BITS = 5
_PARTITION_MASK = (1 << _PARTITION_BITS) - 1
_HASH_BITS = 32
_INT = 0xFFFFFFFF


def scala_tag_order(tags: frozenset[str]) -> list[str]:
    """`tags` in the order kjournal writes them (see the module docstring)."""
    ordered = sorted(tags)
    if len(ordered) <= _SMALL_SET:
        return ordered
    return _champ_order([(_improve(java_string_hash(tag) & _INT), tag) for tag in ordered], 0)


def _improve(h: int) -> int:
    """scala.collection.Hashing.improve on a 32-bit hash code (as an unsigned int)."""
    h = (h + (~(h << 9) & _INT)) & _INT
    h ^= h >> 14
    h = (h + (h << 4)) & _INT
    return h ^ (h >> 10)


def _champ_order(entries: list[tuple[int, str]], shift: int) -> list[str]:
    if shift >= _HASH_BITS:  # a collision node: insertion order
        return [tag for _, tag in entries]
    groups: dict[int, list[tuple[int, str]]] = {}
    for entry in entries:
        groups.setdefault((entry[0] >> shift) & _PARTITION_MASK, []).append(entry)
    masks = sorted(groups)
    data = [groups[mask][0][1] for mask in masks if len(groups[mask]) == 1]
    for mask in masks:
        if len(groups[mask]) > 1:
            data += _champ_order(groups[mask], shift + _PARTITION_BITS)
    return data
