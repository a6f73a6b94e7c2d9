"""Whether digits stand alone as a value: not the end of a word, a path or an assignment, not a
time, an amount, a year or part of a longer number — what the cue and prose readers ask of a
number before they take it for a code.
"""

from __future__ import annotations

import re

# Digits after these in a reply are a time, an amount or a count ("around 2130", "about 1500").
WHEN_OR_HOW_MUCH = re.compile(
    r"(?i)\b(?:around|at|by|until|till|before|after|since|about|in|on|for|over|under)\s+$|[~$€£¥]$"
)


def glued(text: str, at: int) -> bool:
    """Whether a value starting at ``at`` is the end of something else: a word, a path, an
    assignment, a quote, a call."""
    return at > 0 and re.match(r"[A-Za-z0-9_.\-/=:$\"`(*]", text[at - 1]) is not None


def plain_number(text: str, start: int, span: tuple[int, int]) -> bool:
    """Whether digits at ``span`` stand alone as a value: not inside a word or after "=", nor a
    time, an amount or a year."""
    if glued(text, span[0]) or YEAR.fullmatch(text, *span):
        return False
    if re.match(r"[ \-]?\d", text[span[1] : span[1] + 2]) or re.search(
        r"\d[ \-]$", text[max(0, span[0] - 2) : span[0]]
    ):
        return False  # part of a longer number (a card's)
    before = text[max(start, span[0] - 16) : span[0]]
    return WHEN_OR_HOW_MUCH.search(before) is None and EXAMPLE.search(before) is None


EXAMPLE = re.compile(r"(?i)(?:e\.g\.|such\s+as|like|for\s+example|比如|例如|像)\s*$")

YEAR = re.compile(r"(?:19|20)\d\d")
