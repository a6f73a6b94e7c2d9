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

from memwarden.policies.regex_syntax import Node, parse

MAX_FIRST = 300
_CASE_OR_VERBOSE = frozenset("ix")  # flags under which a literal no longer says what it matches


def _class_chars(members: Sequence[Node], *, max_range: int) -> list[str] | None:
    """The characters a ``[...]`` class matches, when it lists them (ranges up to ``max_range``
    wide); None for categories (``\\w``) and wider ranges (a negated class is no class here)."""
    out: list[str] = []
    for op, av in members:
        if op == "lit":
            out.append(av)
        elif op == "range" and av[1] - av[0] <= max_range:
            out.extend(chr(c) for c in range(av[0], av[1] + 1))
        else:
            return None
    return out


def _first(items: Sequence[Node]) -> tuple[set[str] | None, bool]:
    """The characters a match of the item sequence can start with, and whether it can be empty."""
    out: set[str] = set()
    for op, av in items:
        if op == "at":
            if av in ("beginning", "beginning_string"):
                return None, False  # anchored: re already handles it cheaply
            continue  # zero-width
        if op == "assert":
            continue  # zero-width
        if op == "lit":
            out.add(av)
            return out, False
        if op == "in":
            members = _class_chars(av, max_range=100)
            if members is None:
                return None, False
            out.update(members)
            return out, False
        if op == "branch":
            nullable = False
            for branch in av:
                chars, empty = _first(branch)
                if chars is None:
                    return None, False
                out |= chars
                nullable = nullable or empty
            if not nullable:
                return out, False
            continue
        if op == "group":
            flags, inner = av
            if flags & _CASE_OR_VERBOSE:
                return None, False
            chars, empty = _first(inner)
            if chars is None:
                return None, False
            out |= chars
            if not empty:
                return out, False
            continue
        if op == "repeat":
            low, _, inner, _ = av
            chars, empty = _first(inner)
            if chars is None:
                return None, False
            out |= chars
            if low > 0 and not empty:
                return out, False
            continue
        return None, False  # any character, an atomic group, what the reader could not bound
    return out, True


def _parsed(pattern: str, flags: int = 0) -> list[Node] | None:
    """The pattern's items, None when it is case-insensitive or verbose (a literal then says
    nothing sure) or cannot be read."""
    read = parse(pattern, flags)
    if read is None:
        return None
    items, letters = read
    return None if letters & _CASE_OR_VERBOSE else items


def first_chars(pattern: str, flags: int = 0) -> set[str] | None:
    """The set of characters every match of ``pattern`` starts with, or None when unbounded."""
    items = _parsed(pattern, flags)
    if items is None:
        return None
    chars, empty = _first(items)
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


def _expand(items: Sequence[Node]) -> list[str] | None:
    """Every string the item sequence can match, when they are few and nothing but word
    boundaries constrains them (boundaries are dropped here: :class:`PatternSet` checks them)."""
    out = [""]
    for op, av in items:
        if op == "at":
            if av == "boundary":
                continue
            return None
        if op == "lit":
            options = [av]
        elif op == "in":
            members = _class_chars(av, max_range=10)
            if members is None:
                return None
            options = members
        elif op == "branch":
            options = []
            for branch in av:
                sub = _expand(branch)
                if sub is None:
                    return None
                options.extend(sub)
        elif op == "group" and not av[0] & _CASE_OR_VERBOSE:
            sub = _expand(av[1])
            if sub is None:
                return None
            options = sub
        elif op == "repeat" and av[0] == 0 and av[1] == 1 and not av[3]:  # x? (not x?+: it never gives back)
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
    parsed = _parsed(pattern)
    if parsed is None:
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


MAX_GATE = 32


_COMMON = frozenset(" \t\n-.,/:_'\"")


def _rarity(options: frozenset[str]) -> int:
    """How selective a gate is, roughly: the weight of its shortest string, where a letter, digit,
    space or common punctuation counts 1 and a CJK character or rarer symbol 2 (``完成`` opens far
    less often than ``p``). Every opening costs a step of the scan, so gates under 2 are not used."""
    return min(sum(1 if (c.isalnum() and c.isascii()) or c in _COMMON else 2 for c in s) for s in options)


def _required(items: Sequence[Node]) -> frozenset[str] | None:
    """Strings one of which every match of the item sequence contains (the most selective choice
    among the literal runs and required groups found at this level), or None."""
    best: frozenset[str] | None = None

    def consider(options: frozenset[str] | None) -> None:
        nonlocal best
        if not options or len(options) > MAX_GATE or _rarity(options) < 2:
            return
        if best is None or _rarity(options) > _rarity(best):
            best = options

    run = ""
    for op, av in items:
        if op == "lit":
            run += av
            continue
        consider(frozenset({run}) if run else None)
        run = ""
        if op == "group":
            if not av[0] & _CASE_OR_VERBOSE:  # (?i:...) matches what its literals do not
                consider(_required(av[1]))
        elif op == "branch":
            branches = [_required(b) for b in av]
            if all(b is not None for b in branches):
                consider(frozenset(s for b in branches if b is not None for s in b))
        elif op == "repeat" and av[0] >= 1:
            consider(_required(av[2]))
        elif op == "in":
            members = _class_chars(av, max_range=0)
            consider(frozenset(members) if members else None)
    consider(frozenset({run}) if run else None)
    return best


def required_literals(pattern: str) -> frozenset[str] | None:
    """A small set of strings one of which occurs in every match of ``pattern`` — a necessary
    condition that a literal scan can test before the regular expression runs — or None."""
    parsed = _parsed(pattern)
    return None if parsed is None else _required(parsed)


class Residual:
    """One pattern that stays a regular expression, with the cheap tests that must pass before it
    is worth running: a gate (one of its required literals was seen by the scan) and, for an
    anchored pattern, the characters the text can start with."""

    __slots__ = ("first", "gate", "pattern", "regex")

    def __init__(self, pattern: str, gate: int | None) -> None:
        self.pattern = pattern
        self.regex = compile_fast(pattern)
        self.gate = gate
        first = first_chars(pattern[1:]) if pattern.startswith("^") else None
        self.first = frozenset(first) if first else None

    def possible(self, text: str, hits: Mapping[str | int, int]) -> bool:
        return (self.gate is None or self.gate in hits) and (self.first is None or text[:1] in self.first)


class PatternSet:
    """Named groups of patterns searched together.

    Every alternative that expands to a few literal strings goes into one Aho-Corasick automaton
    (one pass over the text finds all of them, word boundaries checked on the hits). What does not
    expand (anchors, lookarounds, ``\\w*``, ``.{0,80}`` …) stays a regular expression, but its
    required literals (:func:`required_literals`) go into the same automaton as a gate: the
    expression runs only when the scan saw one of them. Same answers as the regular expressions
    (``tests/unit/test_fastre.py`` checks it), far fewer scans.

    :meth:`scan` returns the hits: group name → count of literal matches, and gate number → 1.
    """

    def __init__(self, groups: Mapping[str, Sequence[str]]) -> None:
        import ahocorasick

        automaton = ahocorasick.Automaton()
        entries: dict[str, list[tuple[str | int, int, bool, bool]]] = {}
        residual: dict[str, list[Residual]] = {}
        self._gate_owner: dict[int, str] = {}
        self._ungated: set[str] = set()  # groups with a residual pattern no literal gates
        gates = 0
        for name, patterns in groups.items():
            for alt in (a for p in patterns for a in _flatten(p)):
                strings = expand_literals(alt)
                if strings is None:
                    required = required_literals(alt)
                    gate = None
                    if not required:
                        self._ungated.add(name)
                    else:
                        gate, gates = gates, gates + 1
                        self._gate_owner[gate] = name
                        for s in required:
                            entries.setdefault(s, []).append((gate, 0, False, False))
                    residual.setdefault(name, []).append(Residual(alt, gate))
                    continue
                left, right = alt.startswith(r"\b"), alt.endswith(r"\b")
                for s in strings:
                    entries.setdefault(s, []).append((name, len(s), left, right))
        for literal, payload in entries.items():
            automaton.add_word(literal, tuple(payload))
        self._automaton = automaton if entries else None
        if entries:
            automaton.make_automaton()
        self._residual = {name: tuple(r) for name, r in residual.items()}

    def scan(self, text: str) -> dict[str | int, int]:
        """One pass over ``text``: each group's literal match count, and the gates that opened."""
        counts: dict[str | int, int] = {}
        if self._automaton is None:
            return counts
        last = len(text) - 1
        for end, payload in self._automaton.iter(text):
            for name, size, left, right in payload:
                if not size:  # a gate: presence is all that matters
                    counts[name] = 1
                    continue
                start = end - size + 1
                if left and start > 0 and _word(text[start - 1]) == _word(text[start]):
                    continue
                if right and end < last and _word(text[end + 1]) == _word(text[end]):
                    continue
                counts[name] = counts.get(name, 0) + 1
        return counts

    def candidates(self, hits: Mapping[str | int, int]) -> set[str]:
        """The groups that can match, given the scan: those with literal hits, those whose gate
        opened and those with an ungated residual. Every other group certainly does not match."""
        out = set(self._ungated)
        owners = self._gate_owner
        for key in hits:
            out.add(key if isinstance(key, str) else owners[key])
        return out

    def search(self, name: str, text: str, hits: Mapping[str | int, int]) -> bool:
        """Whether any pattern of group ``name`` matches ``text`` (``hits`` from :meth:`scan`)."""
        if name in hits:
            return True
        first = text[:1]
        for r in self._residual.get(name, ()):  # Residual.possible, inlined: this is the hot path
            gate, chars = r.gate, r.first
            if (gate is None or gate in hits) and (chars is None or first in chars) and r.regex.search(text):
                return True
        return False

    def count(self, name: str, text: str, hits: Mapping[str | int, int]) -> int:
        """How many matches of group ``name`` occur in ``text``: literal ones plus each residual
        pattern's non-overlapping matches."""
        n = hits.get(name, 0)
        for r in self._residual.get(name, ()):
            if r.possible(text, hits):
                n += len(r.regex.findall(text))
        return n
