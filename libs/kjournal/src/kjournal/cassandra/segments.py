"""Segment math: which `journal` partition holds a seqNr, which `metajournal` bucket holds an id.

Both must agree bit for bit with the Scala library, or the two implementations would look for the
same journal in different Cassandra partitions.

`metajournal_bucket` = abs(Java `id.toLowerCase().hashCode()` as a long, modulo buckets):

* `hashCode` is Java's String hash over UTF-16 code units (an astral character counts as its two
  surrogates) with 32-bit two's-complement wrap-around.
* `toLowerCase()` in Java follows the JVM's default locale. We implement ROOT-locale semantics
  (what Scala services get with an English or any non-Turkish/Azeri/Lithuanian default locale;
  a Turkish-locale JVM would turn 'I' into 'ı' and use a different bucket) exactly as the JVM of
  the Scala services computes it (`java_version`, from `CassandraSettings.java_version`, 17 by
  default), with that Java's own tables and rules: see java_lower. Python's `str.lower` differs
  from it in three ways, so it is used for ASCII ids only: Java knows the case mappings of its
  own Unicode version (Java 17 has Unicode 13, so 'Ⱟ' U+2C2F is its own lower case there and
  not in Python 3.11); Java makes a capital sigma final ('ς') by its word-BreakIterator rule,
  not Unicode's Final_Sigma context ("A1Σ", "A_Σ" and "s䂻Σ" end in 'ς' in Java, in 'σ' in
  Python); and Python's results change with its Unicode version. 'İ' (U+0130) becomes "i̇"
  (i + U+0307) in both. No difference from the JVMs the tables were read from is known:
  tests/unit/cassandra/test_java_lower.py compares every code point, alone and next to a sigma,
  with what Java 17, 21 and 25 printed, and tests/integration/test_java_lower_case.py with the
  machine's Java 17.
"""

from __future__ import annotations

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.java_lower import java_lower_case
from kjournal.model.seq_nr import SeqNr
from kjournal.wire.java_hash import java_string_hash

__all__ = [
    "METAJOURNAL_BUCKETS",
    "OLD_METAJOURNAL_BUCKETS",
    "java_lower_case",
    "java_string_hash",
    "journal_segment",
    "metajournal_bucket",
]

METAJOURNAL_BUCKETS = 10_000
"""Buckets (`metajournal.segment` values) writers use: Scala's `Segments.default`."""

OLD_METAJOURNAL_BUCKETS = 100
"""The earlier layout (`Segments.old`); readers still look there."""


def journal_segment(seq_nr: SeqNr | int, segment_size: int) -> int:
    """The `journal.segment` of a seqNr: 0-based, `segment_size` events per segment."""
    if segment_size < 2:
        raise ValueError(f"segment size must be at least 2, got {segment_size}")
    if seq_nr < 1:
        raise ValueError(f"seqNr must be positive, got {seq_nr}")
    return (seq_nr - 1) // segment_size


def metajournal_bucket(
    id: str,
    buckets: int = METAJOURNAL_BUCKETS,
    java_version: JavaVersion = DEFAULT_JAVA_VERSION,
) -> int:
    """The `metajournal.segment` holding the head of journal `id` in a layout of `buckets`.

    `java_version`: the Java of the Scala services that share the keyspace (see java_lower).
    """
    if buckets < 1:
        raise ValueError(f"buckets must be positive, got {buckets}")
    # Java: Math.abs(hash.toLong % buckets); |h| mod n is the same number for either sign of h.
    return abs(java_string_hash(java_lower_case(id, java_version))) % buckets
