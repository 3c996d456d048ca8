"""Compare `java_lower_case` with what a JVM printed (JavaLowerCase.java, modes expected/compare).

Shared by the unit test (committed output) and the integration test (output of a live run).
Each check returns the differences found, as readable strings; an empty list means agreement.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.java_lower import java_case_tables
from kjournal.cassandra.java_lower import java_lower_case

SIGMA = "\u03a3"
FINAL_SIGMA = "\u03c2"
_UTF16 = "utf-16-le"


def code_points() -> Iterator[int]:
    """Every code point but the surrogates."""
    yield from range(0xD800)
    yield from range(0xE000, 0x11_0000)


def from_units(units: list[int]) -> str:
    """A Java string given as UTF-16 units (surrogate pairs joined)."""
    return b"".join(unit.to_bytes(2, "little") for unit in units).decode(_UTF16, "surrogatepass")


def from_java_text(text: str) -> str:
    """`text` as Java reads it: a high and a low surrogate side by side are one character.

    (json joins escaped pairs itself; pairs made by concatenation need this.)
    """
    return text.encode(_UTF16, "surrogatepass").decode(_UTF16, "surrogatepass")


def single_differences(expected: dict[str, Any], java: JavaVersion) -> list[str]:
    """Every code point alone; `expected["single"]` lists those whose lower case differs."""
    changed = {code_point: from_units(units) for code_point, units in expected["single"]}
    differences = []
    for code_point in code_points():
        char = chr(code_point)
        want = changed.get(code_point, char)
        got = java_lower_case(char, java)
        if got != want:
            differences.append(f"U+{code_point:04X}: Java {want!a}, here {got!a}")
    return differences


def template_differences(
    template: str, final_edges: list[int], java: JavaVersion, every_bmp: bool = False
) -> list[str]:
    """Every code point c in `template` ("c" marks c): is the template's own sigma final?

    `final_edges`: Java's answer as starts and ends of the runs of c where it is final.
    java_lower_case reads of c only its word-break category, whether it is cased, its UTF-16
    length and whether it is U+FFFF, so its answer is constant wherever those and Java's answer
    are; it is run on the first and last code point of each such stretch (which is where a
    wrong table entry would show), and with `every_bmp` on every code point of the BMP as well.
    """
    tables = java_case_tables(java)
    bmp = tables.words.bmp_categories
    changes = {0, 0xD800, 0xE000, 0xFFFF, 0x1_0000, 0x11_0000}
    changes.update(cp for cp in range(1, len(bmp)) if bmp[cp] != bmp[cp - 1])
    changes.update(tables.words.astral_starts, tables.cased_edges, final_edges)
    edges = sorted(changes)
    candidates = {cp for start, end in itertools.pairwise(edges) for cp in (start, end - 1)}
    if every_bmp:
        candidates.update(range(0x1_0000))
    before = template[: template.index(SIGMA)]
    differences = []
    for code_point in sorted(candidates - set(range(0xD800, 0xE000))):
        char = chr(code_point)
        lower = java_lower_case(template.replace("c", char), java)
        got = lower[len(java_lower_case(before.replace("c", char), java))] == FINAL_SIGMA
        want = bisect_right(final_edges, code_point) % 2 == 1
        if got != want:
            differences.append(f"{template!a} with U+{code_point:04X}: Java final={want}")
    return differences


def id_differences(expected: dict[str, Any], java: JavaVersion) -> list[str]:
    differences = []
    for id_, lower in expected["ids"]:
        want, got = from_java_text(lower), java_lower_case(from_java_text(id_), java)
        if got != want:
            differences.append(f"{id_!a}: Java {want!a}, here {got!a}")
    return differences


def fuzz_ids(fuzz: dict[str, Any]) -> Iterator[str]:
    """The generator's pseudo-random ids: its 64-bit LCG picks lengths and characters."""
    alphabet = [from_java_text(text) for text in fuzz["alphabet"]]
    state = fuzz["seed"]
    for _ in range(fuzz["count"]):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        length = 1 + (state >> 33) % fuzz["max_length"]
        parts = []
        for _ in range(length):
            state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
            parts.append(alphabet[(state >> 33) % len(alphabet)])
        # Joined as Java joins them: a lone high and a lone low surrogate make a pair.
        yield from_java_text("".join(parts))


def sigma_decisions(id_: str, lower: str, java: JavaVersion) -> str:
    """'1' (final) or '0' per capital sigma of `id_`, read off its lower case `lower`."""
    decisions = []
    at = 0
    for char in id_:
        if char == SIGMA:
            decisions.append("1" if lower[at] == FINAL_SIGMA else "0")
            at += 1
        else:
            at += len(java_lower_case(char, java))
    return "".join(decisions)


def fuzz_differences(fuzz: dict[str, Any], java: JavaVersion) -> list[str]:
    """Sigma decisions on every pseudo-random id; whole lower cases too when Java printed them."""
    differences = []
    at = 0  # in Java's decisions, one character per capital sigma
    java_lowers = fuzz.get("lower")
    for index, id_ in enumerate(fuzz_ids(fuzz)):
        lower = java_lower_case(id_, java)
        got = sigma_decisions(id_, lower, java)
        want = fuzz["decisions"][at : at + len(got)]
        at += len(got)
        if got != want:
            differences.append(f"{id_!a}: Java final sigmas {want}, here {got}")
        if java_lowers is not None and lower != from_java_text(java_lowers[index]):
            want = from_java_text(java_lowers[index])
            differences.append(f"{id_!a}: Java {want!a}, here {lower!a}")
    if at != len(fuzz["decisions"]):
        differences.append("Java decided on more capital sigmas than the ids hold here")
    return differences
