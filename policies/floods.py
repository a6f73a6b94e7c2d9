"""Corroboration floods: one writer repeating a claim — near-identical texts, or the same "updated
policy" framing — so that the agent finds it everywhere and believes it. A report on Hindsight
found repetition alone made strong models grant what they had been told to deny. Pure: the
caller keeps each writer's recent claims (``governance/claims.py``) and asks :func:`flood_findings`.

A claim is an item's text as 3-word shingles (3-character ones for text with Chinese characters);
two claims are the same claim at a Jaccard similarity of :data:`NEAR` or more with the same values
(the tokens with a digit, an address or a URL: templated facts — a port per service — are many
facts, not one repeated). An item is flagged
when, with it, :data:`FLOOD_AT` near-identical claims or :data:`FLOOD_AT` items with the same
authority or supersede signal came from its writer within the window: ``medium``, or ``high`` when
the item holds an instruction of its own.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memwarden.policies.injection import Finding
from memwarden.policies.judgement import FORWARDED, Judgement
from memwarden.policies.quality import prepare

NEAR = 0.6
FLOOD_AT = 3  # the third near-identical claim (or framing) within the window is a flood
COMPARED = 64  # an item is compared with its writer's latest claims, this many at most
SKETCH = 128  # shingles kept of a claim (a long text's sample)
MIN_SHINGLES = 4  # a claim has five words (or six characters without spaces) at least
FRAMINGS = frozenset({"authority", "supersede"})  # "updated policy", "this supersedes earlier memories"
_WORD = re.compile(r"\w+")
_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_VALUE = re.compile(r"[^\s\u3400-\u9fff，。；：！？、（）]*(?:\d|@|://)[^\s\u3400-\u9fff，。；：！？、（）]*")


def shingles(prepared: str) -> frozenset[int]:
    """The claim's shingles (``prepared``: casefolded, as the pipeline prepares a text): 3-word
    ones, or 3-character ones for text with Chinese characters."""
    words = _WORD.findall(prepared)
    if not _CJK.search(prepared):  # words
        grams: Iterable[str] = (" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2)))
    else:  # Chinese (no spaces between words): characters
        joined = "".join(words)
        grams = (joined[i : i + 3] for i in range(max(1, len(joined) - 2)))
    hashed = {zlib.crc32(g.encode()) for g in grams}
    # A long text keeps a sample: its SKETCH smallest hashes (the same grams give the same sample,
    # so near-identical texts keep near-identical samples) — a bounded size and comparison cost.
    return frozenset(sorted(hashed)[:SKETCH]) if len(hashed) > SKETCH else frozenset(hashed)


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class Claim:
    """One kept item of a writer: its shingles, its values (the tokens with a digit, an address or a
    URL: what tells one templated fact from another) and the signals its instructions carried."""

    shingles: frozenset[int]
    signals: frozenset[str]
    values: frozenset[str] = frozenset()

    def repeats(self, other: Claim) -> bool:
        """The same claim again: near-identical words, and the same values — "svc-1 listens on
        9001" and "svc-2 listens on 9002" are two facts; the same account or address again is not."""
        return self.values == other.values and similarity(self.shingles, other.shingles) >= NEAR


def values(prepared: str) -> frozenset[str]:
    """The tokens of a claim that carry its values: with a digit, an ``@`` or ``://`` (a long text's
    first :data:`SKETCH` in sorted order, each cut to 200 characters: a bounded size)."""
    found = {m.group(0).strip(".,;:!?)(")[:200] for m in _VALUE.finditer(prepared)}
    return frozenset(sorted(found)[:SKETCH]) if len(found) > SKETCH else frozenset(found)


def flood_positions(judged: Sequence[Judgement], recent: Sequence[Claim]) -> dict[int, list[Finding]]:
    """The items of a request (its judgements after dedup) that repeat a claim or a framing of
    their writer's — ``recent``: the writer's claims within the window, oldest first; the
    request's earlier items count too: their flood findings, by position. Each item is compared
    with the :data:`COMPARED` latest claims at most (a bounded cost for a request of many items)."""
    window = list(recent[-COMPARED:])
    out: dict[int, list[Finding]] = {}
    for j in judged:
        if j.verdict not in FORWARDED:
            continue
        claim = claim_of(j)
        found = flood_findings(claim, window, own_threat=j.threat is not None and j.threat.severity != "low")
        if found:
            out[j.position] = found
        window.append(claim)
        if len(window) > COMPARED:
            del window[0]
    return out


def claim_of(j: Judgement) -> Claim:
    """A kept item's claim: its stored text's shingles, and its instructions' signals."""
    signals = frozenset(rule.split(".")[1] for rule in j.threat.rules) if j.threat is not None else frozenset()
    prepared = prepare(j.text)
    return Claim(shingles(prepared), signals, values(prepared))


def flood_findings(claim: Claim, recent: Sequence[Claim], *, own_threat: bool) -> list[Finding]:
    """The flood findings of ``claim`` given its writer's ``recent`` claims within the window
    (oldest first; the request's earlier items included)."""
    out: list[Finding] = []
    if len(claim.shingles) < MIN_SHINGLES:  # "ok thanks", "Morning": no claim to repeat
        return out
    near = sum(1 for c in recent if claim.repeats(c))
    severity = "high" if own_threat else "medium"
    if near + 1 >= FLOOD_AT:
        out.append(Finding("injection.flood.repeated_claim", severity, 0, 0))
    framed = claim.signals & FRAMINGS
    if framed and sum(1 for c in recent if c.signals & framed) + 1 >= FLOOD_AT:
        out.append(Finding("injection.flood.repeated_framing", "high", 0, 0))
    return out
