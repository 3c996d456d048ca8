"""Java's final-sigma test: `ConditionalSpecialCasing.isFinalCased`, word BreakIterator included.

Java lower-cases a capital sigma 'Σ' to the final 'ς' when, within the word around it as Java's
word `BreakIterator` (ROOT locale) delimits words, a "cased" character precedes it and none
follows it. The iterator is the JDK's table-driven `sun.text.RuleBasedBreakIterator`; this module
runs the same state machine over the same tables (read off the JVM by
tests/fixtures/java_unicode/JavaLowerCase.java) with the same steps, so that even its oddities
carry over: U+FFFF reads as the end of the text, a lone surrogate is a character of its own,
and `isBoundary` answers from a cached break position between calls on one string.

Positions are UTF-16 indexes and the text a sequence of UTF-16 units, as in Java.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["WordBreakTables", "is_final_cased"]

_DONE = 0xFFFF  # CharacterIterator.DONE, which a real U+FFFF in the text is taken for
_NO_BREAK = -1  # BreakIterator.DONE
_IGNORE = -1
_START_STATE = 1
_STOP_STATE = 0
_BMP_END = 0x1_0000


@dataclass(frozen=True, slots=True)
class WordBreakTables:
    """The word iterator's state machine: a category per code point, transitions per category."""

    bmp_categories: tuple[int, ...]
    astral_starts: tuple[int, ...]
    astral_categories: tuple[int, ...]
    forward: tuple[int, ...]
    backward: tuple[int, ...]
    end_states: tuple[bool, ...]
    lookahead_states: tuple[bool, ...]
    category_count: int

    @classmethod
    def from_runs(
        cls,
        runs: Sequence[int],
        forward: Sequence[int],
        backward: Sequence[int],
        end_states: Sequence[int],
        lookahead_states: Sequence[int],
    ) -> WordBreakTables:
        """`runs`: count, category, count, category, … from U+0000 to U+10FFFF."""
        bmp: list[int] = []
        starts: list[int] = []
        categories: list[int] = []
        start = 0
        for count, category in zip(runs[0::2], runs[1::2], strict=True):
            end = start + count
            if start < _BMP_END:
                bmp.extend([category] * (min(end, _BMP_END) - start))
            if end > _BMP_END:
                starts.append(max(start, _BMP_END))
                categories.append(category)
            start = end
        if start != 0x11_0000 or len(end_states) != len(lookahead_states):
            raise ValueError("word break tables do not cover every code point and state")
        category_count, rest = divmod(len(forward), len(end_states))
        if rest or len(backward) % category_count:
            raise ValueError("word break state tables do not match the number of states")
        return cls(
            bmp_categories=tuple(bmp),
            astral_starts=tuple(starts),
            astral_categories=tuple(categories),
            forward=tuple(forward),
            backward=tuple(backward),
            end_states=tuple(map(bool, end_states)),
            lookahead_states=tuple(map(bool, lookahead_states)),
            category_count=category_count,
        )

    def category(self, code_point: int) -> int:
        if code_point < _BMP_END:
            return self.bmp_categories[code_point]
        return self.astral_categories[bisect_right(self.astral_starts, code_point) - 1]


def _is_high(unit: int) -> bool:
    return 0xD800 <= unit <= 0xDBFF


def _is_low(unit: int) -> bool:
    return 0xDC00 <= unit <= 0xDFFF


def _combine(high: int, low: int) -> int:
    return 0x1_0000 + ((high - 0xD800) << 10) + (low - 0xDC00)


class _WordIterator:
    """`RuleBasedBreakIterator` over a `StringCharacterIterator`, for `isBoundary` only."""

    __slots__ = ("_cached", "_end", "_pos", "_tables", "_text")

    def __init__(self, tables: WordBreakTables, text: Sequence[int]) -> None:
        self._tables = tables
        self._text = text
        self._end = len(text)
        self._pos = 0
        self._cached = _NO_BREAK  # cachedLastKnownBreak

    # StringCharacterIterator

    def _current_unit(self) -> int:
        return self._text[self._pos] if self._pos < self._end else _DONE

    def _next_unit(self) -> int:
        if self._pos < self._end - 1:
            self._pos += 1
            return self._text[self._pos]
        self._pos = self._end
        return _DONE

    def _previous_unit(self) -> int:
        if self._pos > 0:
            self._pos -= 1
            return self._text[self._pos]
        return _DONE

    # RuleBasedBreakIterator's code point steps

    def _current(self) -> int:
        first = self._current_unit()
        if _is_high(first) and self._pos < self._end:
            second = self._next_unit()
            self._previous_unit()
            if _is_low(second):
                return _combine(first, second)
        return first

    def _current_count(self) -> int:
        """UTF-16 units of the current code point: 2 for a surrogate pair (past the BMP)."""
        return 2 if self._current() > 0xFFFF else 1

    def _next(self) -> int:
        index = self._pos
        if index == self._end:
            return _DONE
        index += self._current_count()
        if index >= self._end:
            return _DONE
        self._pos = index
        return self._current()

    def _next_index(self) -> int:
        return min(self._pos + self._current_count(), self._end)

    def _previous(self) -> int:
        second = self._previous_unit()
        if _is_low(second) and self._pos > 0:
            first = self._previous_unit()
            if _is_high(first):
                return _combine(first, second)
            self._next_unit()
        return second

    def _handle_next(self) -> int:
        if self._pos == self._end:
            return _NO_BREAK
        tables = self._tables
        result = self._next_index()
        lookahead_result = 0
        state = _START_STATE
        c = self._current()
        while c != _DONE and state != _STOP_STATE:
            category = tables.category(c)
            if category != _IGNORE:
                state = tables.forward[state * tables.category_count + category]
            if tables.lookahead_states[state]:
                if tables.end_states[state]:
                    result = lookahead_result
                else:
                    lookahead_result = self._next_index()
            elif tables.end_states[state]:
                result = self._next_index()
            c = self._next()
        if c == _DONE and lookahead_result == self._end:
            result = lookahead_result
        self._pos = result
        return result

    def _handle_previous(self) -> int:
        tables = self._tables
        state = _START_STATE
        category = 0
        last_category = 0
        c = self._current()
        while c != _DONE and state != _STOP_STATE:
            last_category = category
            category = tables.category(c)
            if category != _IGNORE:
                state = tables.backward[state * tables.category_count + category]
            c = self._previous()
        if c != _DONE:
            self._next()
            if last_category != _IGNORE:
                self._next()
        return self._pos

    def _following(self, offset: int) -> int:
        self._pos = offset
        if offset == 0:
            self._cached = self._handle_next()
            return self._cached
        result = self._cached
        if result >= offset or result <= _NO_BREAK:
            result = self._handle_previous()
        else:
            self._pos = result
        while result != _NO_BREAK and result <= offset:
            result = self._handle_next()
        self._cached = result
        return result

    def is_boundary(self, offset: int) -> bool:
        if not 0 <= offset <= self._end:
            raise IndexError(offset)
        return offset == 0 or self._following(offset - 1) == offset


def _code_point_at(text: Sequence[int], index: int) -> int:
    first = text[index]
    if _is_high(first) and index + 1 < len(text) and _is_low(text[index + 1]):
        return _combine(first, text[index + 1])
    return first


def _code_point_before(text: Sequence[int], index: int) -> int:
    second = text[index - 1]
    if _is_low(second) and index - 1 > 0 and _is_high(text[index - 2]):
        return _combine(text[index - 2], second)
    return second


def _units(code_point: int) -> int:
    return 2 if code_point >= _BMP_END else 1


def is_final_cased(
    tables: WordBreakTables, is_cased: Callable[[int], bool], text: Sequence[int], index: int
) -> bool:
    """Java's `isFinalCased(text, index, ROOT)`: does the 'Σ' at UTF-16 `index` end a word?

    A cased character must come before it with no word boundary in between, and no cased
    character after it before the next boundary. `is_cased` is Java's own "cased" property.
    """
    words = _WordIterator(tables, text)
    i = index
    while i >= 0 and not words.is_boundary(i):
        before = _code_point_before(text, i)
        if is_cased(before):
            i = index + _units(_code_point_at(text, index))
            while i < len(text) and not words.is_boundary(i):
                after = _code_point_at(text, i)
                if is_cased(after):
                    return False
                i += _units(after)
            return True
        i -= _units(before)
    return False
