"""Python's regular-expression syntax read into a small tree, for :mod:`memwarden.policies.fastre`'s
analyses (the characters a match starts with, the strings a pattern expands to, the literals every
match holds) — without CPython's private ``re._parser``, whose tree changes between versions.

The reading is conservative: what it does not know for sure becomes a node the analyses cannot
bound (:data:`ANY`), or the whole pattern is left unread (:class:`Unreadable`) — searched more
slowly, never answered differently. It reads only patterns ``re`` compiles (:func:`parse` compiles first).

Nodes are ``(op, arg)`` pairs:

* ``("lit", ch)`` — one character;
* ``("in", members)`` — a class: ``members`` a list of ``("lit", ch)``, ``("range", (lo, hi))``
  (code points) and ``("other", None)`` (a category such as ``\\d``); a negated class is ``ANY``;
* ``("at", kind)`` — ``boundary``, ``non_boundary``, ``beginning``, ``beginning_string``, ``end``,
  ``end_string``: zero-width;
* ``("assert", items)`` — a lookahead or lookbehind: zero-width;
* ``("branch", [items, …])`` — alternatives;
* ``("group", (flags, items))`` — a group, capturing or not, atomic, or with scoped ``flags``
  (the letters it turns on);
* ``("repeat", (min, max, items, possessive))`` — ``max`` None for no bound; ``possessive``
  (``*+``, ``?+`` …: it never gives back, so it matches fewer strings than its greedy form);
* ``("atomic", items)`` — ``(?>…)``: as possessive;
* ``("any", None)`` — ``.``, ``\\w``, a negated class, a back-reference: any character.

What it does not read (:class:`Unreadable`, the pattern then left to ``re`` as it is): conditional
groups, octal escapes, verbose mode (``x``, global or scoped), a comment holding a backslash, a
quantifier after a comment or a flags group.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

Node = tuple[str, Any]
ANY: Node = ("any", None)

_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_CATEGORIES = frozenset("dDsSwW")
_AT = {"b": "boundary", "B": "non_boundary", "A": "beginning_string", "Z": "end_string"}
_FLAG_LETTERS = frozenset("aiLmsux")


class Unreadable(ValueError):
    """A construct this reader does not know (the analyses then leave the pattern as it is)."""


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.p, self.i = pattern, 0
        self.flags: set[str] = set()

    def peek(self, n: int = 1) -> str:
        return self.p[self.i : self.i + n]

    def take(self) -> str:
        c = self.p[self.i]
        self.i += 1
        return c

    def sequence(self) -> list[Node]:
        """Alternatives up to ``)`` or the end; one list, or a single branch node."""
        branches = [self._items()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self._items())
        if len(branches) == 1:
            return branches[0]
        return [("branch", branches)]

    def _items(self) -> list[Node]:
        items: list[Node] = []
        while self.i < len(self.p) and self.peek() not in ("|", ")"):
            atom = self._atom()
            if atom is None:  # a comment or a flags group: a quantifier after it applies to what came before
                if self.peek() in ("*", "+", "?", "{"):
                    raise Unreadable("a quantifier after a comment")
                continue
            items.append(self._quantified(atom))
        return items

    def _quantified(self, atom: Node) -> Node:
        c = self.peek()
        bounds: tuple[int, int | None] | None = None
        if c == "*":
            bounds = (0, None)
        elif c == "+":
            bounds = (1, None)
        elif c == "?":
            bounds = (0, 1)
        elif c == "{":
            found = re.match(r"\{([0-9]*)(,?)([0-9]*)\}", self.p[self.i :])
            if found and (found[1] or found[2] or found[3]):  # {,} is *; {} is two characters
                low = int(found[1]) if found[1] else 0
                high = int(found[3]) if found[3] else (None if found[2] else low)
                self.i += len(found[0]) - 1
                bounds = (low, high)
        if bounds is None:
            return atom
        self.i += 1
        possessive = False
        if self.peek() == "?":  # lazy: the same strings, found in another order
            self.i += 1
        elif self.peek() == "+":
            self.i += 1
            possessive = True
        if atom[0] in ("at", "assert"):
            raise Unreadable("a repeated zero-width item")
        return ("repeat", (bounds[0], bounds[1], [atom], possessive))

    def _atom(self) -> Node | None:
        c = self.take()
        if c == "(":
            return self._group()
        if c == "[":
            return self._class()
        if c == ".":
            return ANY
        if c == "^":
            return ("at", "beginning")
        if c == "$":
            return ("at", "end")
        if c == "\\":
            return self._escape(in_class=False)
        return ("lit", c)

    def _group(self) -> Node | None:
        if self.peek() != "?":
            return self._closed(("group", (frozenset(), self.sequence())))
        self.i += 1
        c = self.take()
        if c == ":":
            return self._closed(("group", (frozenset(), self.sequence())))
        if c == ">":
            return self._closed(("atomic", self.sequence()))
        if c in ("=", "!"):
            return self._closed(("assert", self.sequence()))
        if c == "<" and self.peek() in ("=", "!"):
            self.i += 1
            return self._closed(("assert", self.sequence()))
        if c == "#":
            end = self.p.index(")", self.i)
            if "\\" in self.p[self.i : end]:  # re skips an escaped ")" in a comment
                raise Unreadable("a comment with a backslash")
            self.i = end + 1
            return None
        if c == "P":
            kind = self.take()
            if kind == "<":
                self.i = self.p.index(">", self.i) + 1
                return self._closed(("group", (frozenset(), self.sequence())))
            if kind == "=":
                self.i = self.p.index(")", self.i) + 1
                return ANY  # a back-reference
            raise Unreadable(f"(?P{kind}")
        if c == "(":
            raise Unreadable("a conditional group")
        # flags: (?aiLmsux) at the start, or (?flags-flags:…) scoped
        self.i -= 1
        on = ""
        while self.peek() in _FLAG_LETTERS and self.peek():
            on += self.take()
        if self.peek() == "-":
            self.i += 1
            while self.peek() in _FLAG_LETTERS and self.peek():
                self.i += 1
        if "x" in on:  # verbose: whitespace and # comments mean something else inside
            raise Unreadable("verbose mode")
        c = self.take()
        if c == ")":
            self.flags.update(on)
            return None
        if c == ":":
            return self._closed(("group", (frozenset(on), self.sequence())))
        raise Unreadable(f"(?{on}{c}")

    def _closed(self, node: Node) -> Node:
        if self.take() != ")":
            raise Unreadable("an unclosed group")
        return node

    def _class(self) -> Node:
        if self.peek() == "^":
            end = _class_end(self.p, self.i + 1)
            self.i = end + 1
            return ANY
        members: list[Node] = []
        first = True
        while True:
            c = self.take()
            if c == "]" and not first:
                break
            first = False
            start = self._escape(in_class=True) if c == "\\" else ("lit", c)
            if self.peek() == "-" and self.peek(2)[1:] not in ("]", "") and start[0] == "lit":
                self.i += 1
                c2 = self.take()
                stop = self._escape(in_class=True) if c2 == "\\" else ("lit", c2)
                if stop[0] != "lit":
                    raise Unreadable("a range to a category")
                members.append(("range", (ord(start[1]), ord(stop[1]))))
                continue
            members.append(start if start[0] == "lit" else ("other", None))
        return ("in", members)

    def _escape(self, *, in_class: bool) -> Node:
        c = self.take()
        if c in _CATEGORIES:
            return ANY
        if c in _SIMPLE:
            return ("lit", _SIMPLE[c])
        if c == "b" and in_class:
            return ("lit", "\b")
        if c in _AT and not in_class:
            return ("at", _AT[c])
        if c == "x":
            return self._code(2)
        if c == "u":
            return self._code(4)
        if c == "U":
            return self._code(8)
        if c == "N":
            end = self.p.index("}", self.i)
            name = self.p[self.i + 1 : end]
            self.i = end + 1
            return ("lit", unicodedata.lookup(name))
        if c.isdigit():
            if in_class or c == "0":
                raise Unreadable("an octal escape")
            while self.peek().isdigit():
                self.i += 1
            return ANY  # a back-reference
        if c.isascii() and c.isalpha():
            raise Unreadable(f"\\{c}")
        return ("lit", c)

    def _code(self, digits: int) -> Node:
        text = self.p[self.i : self.i + digits]
        self.i += digits
        return ("lit", chr(int(text, 16)))


def _class_end(pattern: str, i: int) -> int:
    """The index of the ``]`` closing a class whose members start at ``i``."""
    first = True
    while True:
        c = pattern[i]
        if c == "\\":
            i += 2
            first = False
            continue
        if c == "]" and not first:
            return i
        first = False
        i += 1


def parse(pattern: str, flags: int = 0) -> tuple[list[Node], frozenset[str]] | None:
    """The pattern's tree and its global flag letters (``flags`` given as ``re`` flags among them);
    None when ``re`` refuses it or this reader does not know one of its constructs."""
    try:
        re.compile(pattern, flags)
    except re.error:
        return None
    reader = _Reader(pattern)
    try:
        items = reader.sequence()
        if reader.i != len(pattern):
            return None
    except (Unreadable, IndexError, ValueError, KeyError):
        return None
    letters = set(reader.flags)
    if flags & re.IGNORECASE:
        letters.add("i")
    if flags & re.VERBOSE:
        letters.add("x")
    return items, frozenset(letters)
