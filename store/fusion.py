"""Recall's fusion of its retrievers' rankings and its fill of the ``max_tokens`` budget: pure
functions over candidate lists (no database, no index), so each is testable on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60
# A keyword hit joins the fusion when its BM25 reaches this share of the query's idf mass (what a
# memory holding each scored term once would score): a memory that shares only a common word with
# the query (a name in half the bank's turns) is no evidence. Chosen on the retrieval benchmark's
# tune split, balanced between questions worded like their answer and paraphrased ones
# (bench/retrieval.py; README *Retrieval quality*).
KEYWORD_GATE = 0.8
# One net vote of feedback moves a memory by a quarter of a first place in one retriever; at most
# three votes count either way.
FEEDBACK_STEP = 0.25 / (RRF_K + 1)
FEEDBACK_CAP = 3


def rrf(
    rankings: Sequence[Sequence[str]], *, weights: Sequence[float] | None = None, k: int = RRF_K
) -> dict[str, float]:
    """Reciprocal rank fusion: each ranking (best first) gives the memory at rank ``r`` (from 1)
    ``weight / (k + r)``, and a memory's score is the sum over the rankings that hold it. Weights
    default to 1 for every ranking. The scores come in the order the memories were first met,
    ranking by ranking (:func:`ranking` breaks ties by it)."""
    fused: dict[str, float] = {}
    for n, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[n]
        for rank, memory_id in enumerate(ranking):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight * (1.0 / (k + rank + 1))
    return fused


def strong_keyword_hits(ranked: Sequence[str], scores: Mapping[str, float], mass: float) -> list[str]:
    """The keyword ranking's memories whose BM25 reaches KEYWORD_GATE × ``mass``, in order."""
    bar = KEYWORD_GATE * mass
    return [i for i in ranked if scores[i] >= bar]


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
