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
from collections.abc import Mapping, Sequence
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
    """A set of patterns searched as fast as they allow: anchored ones together (skipped at once
    when the text's first character cannot start them), those with a bounded first character
    together behind a lookahead, the rest together as they are."""

    __slots__ = ("_parts", "patterns")

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        anchored, bounded, rest = [], [], []
        chars: set[str] = set()
        anchored_first: set[str] | None = set()
        for p in patterns:
            if p.startswith("^"):
                anchored.append(p)
                first = first_chars(p[1:]) if anchored_first is not None else None
                anchored_first = None if first is None or anchored_first is None else anchored_first | first
                continue
            first = first_chars(p)
            if first:
                bounded.append(p)
                chars |= first
            else:
                rest.append(p)
        parts: list[tuple[Any, frozenset[str] | None]] = []
        if anchored:
            gate = frozenset(anchored_first) if anchored_first else None
            parts.append((re.compile("|".join(f"(?:{p})" for p in anchored)), gate))
        if bounded:
            charset = "".join(sorted(re.escape(c) for c in chars))
            combined = "|".join(f"(?:{p})" for p in bounded)
            parts.append((re.compile(f"(?=[{charset}])(?:{combined})"), None))
        if rest:
            parts.append((re.compile("|".join(f"(?:{p})" for p in rest)), None))
        self._parts = tuple(parts)

    def search(self, text: str) -> bool:
        for regex, gate in self._parts:  # noqa: SIM110 - a plain loop: this is the hottest path
            if (gate is None or text[:1] in gate) and regex.search(text):
                return True
        return False

    def count(self, text: str) -> int:
        return sum(len(regex.findall(text)) for regex, gate in self._parts if gate is None or text[:1] in gate)


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (``a|b(c|d)|e`` → ``a``, ``b(c|d)``, ``e``), so that
    each can be classified on its own by :class:`Matcher`."""
    out: list[str] = []
    depth, start, i, in_class = 0, 0, 0, False
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


MAX_EXPANSION = 64


def _expand(items: Any) -> list[str] | None:
    """Every string the item sequence can match, when they are few and nothing but word
    boundaries constrains them (boundaries are dropped here: :class:`PatternSet` checks them)."""
    out = [""]
    for op, av in items:
        if op is C.AT:
            if av is C.AT_BOUNDARY:
                continue
            return None
        if op is C.LITERAL:
            options = [chr(av)]
        elif op is C.IN:
            options = []
            for op2, av2 in av:
                if op2 is C.LITERAL:
                    options.append(chr(av2))
                elif op2 is C.RANGE and av2[1] - av2[0] <= 10:
                    options.extend(chr(c) for c in range(av2[0], av2[1] + 1))
                else:
                    return None
        elif op is C.BRANCH:
            options = []
            for branch in av[1]:
                sub = _expand(branch)
                if sub is None:
                    return None
                options.extend(sub)
        elif op is C.SUBPATTERN:
            sub = _expand(av[3])
            if sub is None:
                return None
            options = sub
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] == 0 and av[1] == 1:
            sub = _expand(av[2])
            if sub is None:
                return None
            options = ["", *sub]
        else:
            return None
        out = [a + b for a in out for b in options]
        if len(out) > MAX_EXPANSION:
            return None
    return out


def expand_literals(pattern: str) -> list[str] | None:
    """The finite set of strings ``pattern`` matches (word boundaries aside), or None."""
    try:
        parsed = P.parse(pattern)
    except re.error:
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    strings = _expand(parsed)
    if strings is None or any(not s for s in strings):
        return None
    return strings


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # exactly what re's \\w matches in str patterns


def _flatten(pattern: str) -> list[str]:
    """``a|b`` → ``a``, ``b``; ``\\b(a|b)\\b`` → ``\\b(?:a)\\b``, ``\\b(?:b)\\b``: finer pieces expand more often."""
    out: list[str] = []
    for alt in split_alternatives(pattern):
        inner = re.fullmatch(r"\\b\((.*)\)\\b", alt, re.S)
        if inner and _compiles(inner.group(1)) and len(split_alternatives(inner.group(1))) > 1:
            out.extend(rf"\b(?:{a})\b" for a in split_alternatives(inner.group(1)))
        else:
            out.append(alt)
    return out


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


class PatternSet:
    """Named groups of patterns searched together.

    Every alternative that expands to a few literal strings goes into one Aho-Corasick automaton
    (one pass over the text finds all of them, word boundaries checked on the hits); what does not
    expand (anchors, lookarounds, ``\\w*``, ``.{0,80}`` …) stays a regular expression, searched per
    group only when asked. Same answers as the regular expressions, far fewer scans.
    """

    def __init__(self, groups: Mapping[str, Sequence[str]]) -> None:
        import ahocorasick

        automaton = ahocorasick.Automaton()
        entries: dict[str, list[tuple[str, int, bool, bool]]] = {}
        residual: dict[str, list[str]] = {}
        for name, patterns in groups.items():
            for alt in (a for p in patterns for a in _flatten(p)):
                strings = expand_literals(alt)
                if strings is None:
                    residual.setdefault(name, []).append(alt)
                    continue
                left, right = alt.startswith(r"\b"), alt.endswith(r"\b")
                for s in strings:
                    entries.setdefault(s, []).append((name, len(s), left, right))
        for literal, payload in entries.items():
            automaton.add_word(literal, tuple(payload))
        self._automaton = automaton if entries else None
        if entries:
            automaton.make_automaton()
        self._residual = {name: Matcher(p) for name, p in residual.items()}

    def literal_counts(self, text: str) -> dict[str, int]:
        """How often each group's literal alternatives occur in ``text``."""
        counts: dict[str, int] = {}
        if self._automaton is None:
            return counts
        last = len(text) - 1
        for end, payload in self._automaton.iter(text):
            for name, size, left, right in payload:
                start = end - size + 1
                if left and start > 0 and _word(text[start - 1]) == _word(text[start]):
                    continue
                if right and end < last and _word(text[end + 1]) == _word(text[end]):
                    continue
                counts[name] = counts.get(name, 0) + 1
        return counts

    def residual(self, name: str) -> Matcher | None:
        """The regular-expression part of a group (None when all of it is literal)."""
        return self._residual.get(name)

    def residual_search(self, name: str, text: str) -> bool:
        matcher = self._residual.get(name)
        return matcher is not None and matcher.search(text)

    def residual_count(self, name: str, text: str) -> int:
        matcher = self._residual.get(name)
        return matcher.count(text) if matcher is not None else 0
