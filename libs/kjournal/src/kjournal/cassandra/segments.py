"""Segment math: which `journal` partition holds a seqNr, which `metajournal` bucket holds an id.

Both must agree bit for bit with the Scala library, or the two implementations would look for the
same journal in different Cassandra partitions.

`metajournal_bucket` = abs(Java `id.toLowerCase().hashCode()` as a long, modulo buckets):

* `hashCode` is Java's String hash over UTF-16 code units (an astral character counts as its two
  surrogates) with 32-bit two's-complement wrap-around.
* `toLowerCase()` in Java follows the JVM's default locale. We implement ROOT-locale semantics
  (what Scala services get with an English or any non-Turkish/Azeri/Lithuanian default locale):
  Unicode full lower-case mapping, so 'İ' (U+0130) becomes "i̇" (two characters, i + U+0307) and
  'I' becomes 'i' (a Turkish-locale JVM would produce 'ı' and a different bucket).
  Known gaps, all outside what ids normally contain: Java decides the final form of a capital
  sigma 'Σ' with its word BreakIterator while Python uses the Unicode Final_Sigma context, so ids
  such as "A1Σ" or "A_Σ" lower-case differently; and characters whose case mapping is newer than
  the JVM's Unicode version (Java 17 knows Unicode 13) are lower-cased here but not there.
  tests/fixtures/cassandra/ holds the table computed with jshell that pins all of this down.
"""

from __future__ import annotations

import sys

from kjournal.model.seq_nr import SeqNr

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

_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def journal_segment(seq_nr: SeqNr | int, segment_size: int) -> int:
    """The `journal.segment` of a seqNr: 0-based, `segment_size` events per segment."""
    if segment_size < 2:
        raise ValueError(f"segment size must be at least 2, got {segment_size}")
    if seq_nr < 1:
        raise ValueError(f"seqNr must be positive, got {seq_nr}")
    return (seq_nr - 1) // segment_size


def java_lower_case(value: str) -> str:
    """Java's `String.toLowerCase(Locale.ROOT)`, within the limits in the module docstring.

    Python's `str.lower` applies the same Unicode full mapping (including İ → i̇), so it is used
    as is; the differences are the documented sigma context and Unicode version.
    """
    return value.lower()


def java_string_hash(value: str) -> int:
    """Java's `String.hashCode()`: s[0]·31^(n-1) + … + s[n-1] over UTF-16 units, as a signed int."""
    h = 0
    if value.isascii():
        for unit in value.encode("ascii"):
            h = (31 * h + unit) & 0xFFFFFFFF
    else:
        units = memoryview(value.encode(_UTF16, "surrogatepass")).cast("H")
        for unit in units:
            h = (31 * h + unit) & 0xFFFFFFFF
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


def metajournal_bucket(id: str, buckets: int = METAJOURNAL_BUCKETS) -> int:
    """The `metajournal.segment` holding the head of journal `id` in a layout of `buckets`."""
    if buckets < 1:
        raise ValueError(f"buckets must be positive, got {buckets}")
    # Java: Math.abs(hash.toLong % buckets); |h| mod n is the same number for either sign of h.
    return abs(java_string_hash(java_lower_case(id))) % buckets
