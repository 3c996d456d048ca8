"""Java's `String.toLowerCase(Locale.ROOT)`, as the JVM of a given Java version computes it.

The Scala library buckets `metajournal` rows by the Java lower case of the journal id, so ours
must be Java's to the character, not Python's:

* Each code point maps as Java's `Character.toLowerCase` does (the simple, one-to-one mapping),
  from the Unicode version of that Java (17: Unicode 13, 21: 15, 25: 16), except 'İ' (U+0130),
  which becomes "i̇" (i + U+0307, two characters).
* A capital sigma 'Σ' becomes the final 'ς' or 'σ' by Java's own rule (java_word_break).

The tables are read off real JVMs by tests/fixtures/java_unicode/JavaLowerCase.java (see its
README) and kept in java_unicode/java<version>.json; Python's `str.lower` is not used beyond
ASCII, so a Python upgrade (new Unicode tables) cannot move an id to another bucket.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from importlib import resources
from typing import Literal
from typing import get_args

from kjournal.cassandra.java_word_break import WordBreakTables
from kjournal.cassandra.java_word_break import is_final_cased

__all__ = [
    "DEFAULT_JAVA_VERSION",
    "JavaCaseTables",
    "JavaVersion",
    "java_case_tables",
    "java_lower_case",
]

JavaVersion = Literal[17, 21, 25]
"""Java versions (feature releases) whose tables are here; each was run to produce them."""

DEFAULT_JAVA_VERSION: JavaVersion = 17

_SIGMA = 0x03A3
_SMALL_SIGMA = "\u03c3"
_FINAL_SIGMA = "\u03c2"
_SURROGATE = re.compile("[\ud800-\udfff]")
_UTF16 = "utf-16-le"


@dataclass(frozen=True, slots=True)
class JavaCaseTables:
    """One Java version's lower-case data."""

    java: str
    """The exact JVM version the tables were read from."""
    lower: dict[int, str]
    """Code point → its lower case, for `str.translate`; code points that keep their case absent."""
    cased_edges: tuple[int, ...]
    """Starts and ends of the runs of code points Java calls "cased" (for the final sigma)."""
    words: WordBreakTables

    def is_cased(self, code_point: int) -> bool:
        return bisect_right(self.cased_edges, code_point) % 2 == 1


@functools.cache
def java_case_tables(java_version: JavaVersion) -> JavaCaseTables:
    if java_version not in get_args(JavaVersion):
        known = ", ".join(map(str, get_args(JavaVersion)))
        raise ValueError(f"no lower-case tables for Java {java_version} (known: {known})")
    path = resources.files(__package__).joinpath("java_unicode", f"java{java_version}.json")
    data = json.loads(path.read_text(encoding="ascii"))
    lower: dict[int, str] = {}
    for start, count, stride, delta in data["lower"]:
        for code_point in range(start, start + count * stride, stride):
            lower[code_point] = chr(code_point + delta)
    for code_point, units in data["lower_multi"]:
        lower[code_point] = array("H", units).tobytes().decode(_UTF16, "surrogatepass")
    word = data["word"]
    return JavaCaseTables(
        java=data["java"],
        lower=lower,
        cased_edges=tuple(data["cased"]),
        words=WordBreakTables.from_runs(
            word["categories"], word["forward"], word["backward"], word["end"], word["lookahead"]
        ),
    )


def java_lower_case(value: str, java_version: JavaVersion = DEFAULT_JAVA_VERSION) -> str:
    """`value.toLowerCase(Locale.ROOT)` on a JVM of `java_version`."""
    if value.isascii():  # ids nearly always are; ASCII case mapping is the same everywhere
        return value.lower()
    tables = java_case_tables(java_version)
    if _SURROGATE.search(value):
        # Java sees a high and a low surrogate side by side as one character.
        value = value.encode(_UTF16, "surrogatepass").decode(_UTF16, "surrogatepass")
    if "\u03a3" not in value:
        return value.translate(tables.lower)
    return _lower_with_sigmas(value, tables)


def _lower_with_sigmas(value: str, tables: JavaCaseTables) -> str:
    units = array("H", value.encode(_UTF16, "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    parts: list[str] = []
    index = 0  # in UTF-16 units, as Java counts
    for char in value:
        code_point = ord(char)
        if code_point == _SIGMA:
            final = is_final_cased(tables.words, tables.is_cased, units, index)
            parts.append(_FINAL_SIGMA if final else _SMALL_SIGMA)
        else:
            parts.append(tables.lower.get(code_point, char))
        index += 2 if code_point > 0xFFFF else 1
    return "".join(parts)
