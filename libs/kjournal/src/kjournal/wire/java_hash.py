"""Java's `String.hashCode()`, which both metajournal buckets and Scala's hash sets are built on."""

from __future__ import annotations

import sys

__all__ = ["java_string_hash"]

_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


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
