"""What secret detection finds — a span of one kind — and the word automaton its prefilters use
(shared by ``secrets`` and ``secret_cues``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    start: int
    end: int


def word_automaton(words: Iterable[str]) -> Any:
    """An Aho-Corasick automaton over ``words`` (casefolded text is searched in one pass, ~1 µs for
    a short field where an alternation of the words took ~10)."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for word in words:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton
