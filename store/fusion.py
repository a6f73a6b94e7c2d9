"""Recall's fusion of its retrievers' rankings and its fill of the ``max_tokens`` budget: pure
functions over candidate lists (no database, no index), so each is testable on its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

RRF_K = 60
# The fusion: the semantic arm's cosines as z-scores within the query's pool, plus each keyword hit's
# BM25 over the query's idf mass (≈ the share of the query's information the memory holds), weighted
# by how far the semantic arm agrees with the keyword arm's first hit: AGREEMENT_WEIGHT × (that hit's
# semantic z-score − AGREEMENT_FLOOR), at least 0. A question worded like its answer puts the answer
# first in both arms (the keyword evidence counts); a paraphrased one makes the keyword arm's first
# hit a memory that merely shares a name (the semantic arm ranks it low: the keyword evidence does
# not count). Chosen by the worst margin over the better single arm on every retrieval set's tune
# split and every stratum pooled over them (bench/fusion_choice.py; docs/operations/benchmarks/held-out.md).
AGREEMENT_WEIGHT = 1.0
AGREEMENT_FLOOR = 1.0
# A recalled memory's relevance, 0..1: σ(A·cosine + B·min(1.5, BM25 / idf mass) + C), fitted on the
# retrieval sets' tune splits with the questions' evidence as the relevant memories, both classes
# weighted alike (bench/fusion_choice.py prints the fit). 0.5 is where a memory stops looking more
# like the memories questions were about than like the rest; unlike the fused score, which ranks
# within one query, it compares across queries, so a threshold can use it (the Mem0 front's score).
CALIBRATED_FOR = "e5-small-q4"  # the embedder whose cosines the relevance was fitted on
RELEVANCE_COSINE = 17.54
RELEVANCE_KEYWORD = 6.76
RELEVANCE_BIAS = -15.64
# One net vote of feedback moves a memory by a quarter of a standard deviation of the query's
# cosines; at most three votes count either way.
FEEDBACK_STEP = 0.25
FEEDBACK_CAP = 3


def rrf(
    rankings: Sequence[Sequence[str]], *, weights: Sequence[float] | None = None, k: int = RRF_K
) -> dict[str, float]:
    """Reciprocal rank fusion: each ranking (best first) gives the memory at rank ``r`` (from 1)
    ``weight / (k + r)``, and a memory's score is the sum over the rankings that hold it. Weights
    default to 1 for every ranking. The scores come in the order the memories were first met,
    ranking by ranking (:func:`ranking` breaks ties by it). (Measured beside the fusion recall
    uses: bench/fusion_choice.py.)"""
    fused: dict[str, float] = {}
    for n, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[n]
        for rank, memory_id in enumerate(ranking):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight * (1.0 / (k + rank + 1))
    return fused


class Fused(NamedTuple):
    """The fused scores (in the order the memories were met: the semantic ranking's, then the
    keyword-only hits) and the weight the keyword evidence got in this query."""

    scores: dict[str, float]
    keyword_weight: float


def fuse(semantic: Sequence[tuple[str, float]], keyword: Sequence[tuple[str, float]], mass: float) -> Fused:
    """The fused scores of the two arms' rankings (each best first, with its scores: cosines and
    BM25). Without a semantic ranking (no query vector, a bank waiting for its re-embed) the keyword
    ranking alone, as BM25 over the idf mass."""
    if not semantic:
        return Fused({i: s / mass if mass else s for i, s in keyword}, 1.0)
    cosines = [s for _, s in semantic]
    mean = sum(cosines) / len(cosines)
    std = (sum((c - mean) ** 2 for c in cosines) / len(cosines)) ** 0.5 or 1.0
    low = (min(cosines) - mean) / std
    scores = {i: (s - mean) / std for i, s in semantic}
    if not keyword or mass <= 0:
        return Fused(scores, 0.0)
    weight = AGREEMENT_WEIGHT * max(0.0, scores.get(keyword[0][0], low) - AGREEMENT_FLOOR)
    if weight > 0:
        for i, s in keyword:
            scores[i] = scores.get(i, low) + weight * s / mass
    return Fused(scores, weight)


def relevance(cosine: float | None, keyword_share: float | None) -> float:
    """The calibrated relevance of a memory from its cosine to the query (None: the semantic arm did
    not rank it) and its BM25 over the query's idf mass (None: no keyword hit)."""
    z = RELEVANCE_BIAS + RELEVANCE_COSINE * (cosine if cosine is not None else 0.0)
    z += RELEVANCE_KEYWORD * min(1.5, keyword_share or 0.0)
    return round(1.0 / (1.0 + math.exp(-z)), 4)


def nudge(
    fused: Mapping[str, float],
    votes: Mapping[str, int],
    *,
    step: float = FEEDBACK_STEP,
    cap: int = FEEDBACK_CAP,
) -> dict[str, float]:
    """``fused`` with each memory's net feedback votes added, ``step`` a vote, at most ``cap``
    votes either way; the order is kept."""
    return {
        memory_id: score + step * max(-cap, min(cap, votes[memory_id])) if memory_id in votes else score
        for memory_id, score in fused.items()
    }


def ranking(scores: Mapping[str, float]) -> list[str]:
    """The memories by score, best first; ties keep the order of ``scores``."""
    return sorted(scores, key=lambda i: -scores[i])


def fill_budget(ranked: Sequence[str], costs: Mapping[str, int], max_tokens: int) -> list[str]:
    """The ranked memories that fit ``max_tokens``, as Hindsight picks them
    (``select_facts_within_budget``): in rank order, one that does not fit is skipped and the
    next ones are still tried; when none fits, the first alone; none at all for a budget of 0 or
    less. A memory without a cost in ``costs`` is left out (in recall: it left the vector index,
    archived or replaced, since it was ranked)."""
    picked: list[str] = []
    first: str | None = None
    used = 0
    if max_tokens <= 0:
        return picked
    for memory_id in ranked:
        cost = costs.get(memory_id)
        if cost is None:
            continue
        if used + cost > max_tokens:
            first = first or memory_id
            continue
        used += cost
        picked.append(memory_id)
    return picked or ([first] if first is not None else [])
