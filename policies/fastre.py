"""Compile rule patterns so that searching them is cheap.

Python's ``re`` tries every alternative at every position of the text. For the rule tables — long
alternations of words, many with ``\\b`` in front, which defeats ``re``'s own literal-prefix scan —
that costs 5–15 µs per pattern and text (measured: ``bench/policy_throughput.py``). When the set
of characters a match can start with is known and small, :func:`compile_fast` puts a one-character
lookahead in front, ``(?=[<first chars>])(?:pattern)``: most positions are rejected by one set test,
and the same pattern matches the same text 5–15× faster. Patterns whose first character cannot be
bounded (``\\w``, ``.``, a negated set, an empty match) are compiled as they are.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812
from re import _parser as P  # type: ignore[attr-defined]  # noqa: N812
from typing import Any

MAX_FIRST = 300


def _first(items: Any) -> tuple[set[str] | None, bool]:
    """The characters a match of the item sequence can start with, and whether it can be empty."""
    out: set[str] = set()
    for op, av in items:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            if op is C.AT and av in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
                return None, False  # anchored: re already handles it cheaply
            continue  # zero-width
        if op is C.LITERAL:
            out.add(chr(av))
            return out, False
        if op is C.IN:
            for op2, av2 in av:
                if op2 is C.LITERAL:
                    out.add(chr(av2))
                elif op2 is C.RANGE and av2[1] - av2[0] <= 100:
                    out.update(chr(c) for c in range(av2[0], av2[1] + 1))
                else:
                    return None, False
            return out, False
        if op is C.BRANCH:
            nullable = False
            for branch in av[1]:
                chars, empty = _first(branch)
                if chars is None:
                    return None, False
                out |= chars
                nullable = nullable or empty
            if not nullable:
                return out, False
            continue
        if op is C.SUBPATTERN:
            chars, empty = _first(av[3])
            if chars is None:
                return None, False
            out |= chars
            if not empty:
                return out, False
            continue
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            chars, empty = _first(av[2])
            if chars is None:
                return None, False
            out |= chars
            if av[0] > 0 and not empty:
                return out, False
            continue
        return None, False  # ANY, CATEGORY, NOT_LITERAL, group references: unbounded
    return out, True


def first_chars(pattern: str, flags: int = 0) -> set[str] | None:
    """The set of characters every match of ``pattern`` starts with, or None when unbounded."""
    parsed = P.parse(pattern, flags)
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    chars, empty = _first(parsed)
    if chars is None or empty or len(chars) > MAX_FIRST:
        return None
    return chars


def compile_fast(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern)``, with a first-character lookahead when one can be derived."""
    chars = first_chars(pattern, flags)
    if not chars:
        return re.compile(pattern, flags)
    charset = "".join(sorted(re.escape(c) for c in chars))
    return re.compile(f"(?=[{charset}])(?:{pattern})", flags)


class Matcher:
    """A set of patterns searched as fast as they allow: anchored ones together, those with a
    bounded first character together behind a lookahead, the rest together as they are."""

    __slots__ = ("_parts", "patterns")

    def __init__(self, patterns: list[str] | tuple[str, ...]) -> None:
        self.patterns = tuple(patterns)
        anchored, bounded, rest = [], [], []
        chars: set[str] = set()
        for p in patterns:
            if p.startswith("^"):
                anchored.append(p)
                continue
            first = first_chars(p)
            if first:
                bounded.append(p)
                chars |= first
            else:
                rest.append(p)
        parts = []
        if anchored:
            parts.append(re.compile("|".join(f"(?:{p})" for p in anchored)))
        if bounded:
            charset = "".join(sorted(re.escape(c) for c in chars))
            parts.append(re.compile(f"(?=[{charset}])(?:" + "|".join(f"(?:{p})" for p in bounded) + ")"))
        if rest:
            parts.append(re.compile("|".join(f"(?:{p})" for p in rest)))
        self._parts = tuple(parts)

    def search(self, text: str) -> bool:
        return any(part.search(text) for part in self._parts)

    def count(self, text: str) -> int:
        return sum(len(part.findall(text)) for part in self._parts)


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (``a|b(c|d)|e`` → ``a``, ``b(c|d)``, ``e``), so that
    each can be classified on its own by :class:`Matcher`."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return [p for p in out if p]
