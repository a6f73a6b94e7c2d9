"""Recall's fusion and budget fill (store/fusion.py): pure functions, checked on small hand-computed
inputs without a database."""

from __future__ import annotations

import math

import pytest

from memwarden.store.fusion import (
    AGREEMENT_FLOOR,
    AGREEMENT_WEIGHT,
    FEEDBACK_CAP,
    FEEDBACK_STEP,
    RRF_K,
    fill_budget,
    fuse,
    nudge,
    ranking,
    relevance,
    rrf,
)


def test_rrf_sums_one_over_k_plus_rank_across_the_rankings() -> None:
    # semantic a, b, c; keyword c, a, d (k = 60):
    #   a = 1/61 + 1/62 ≈ 0.032522    c = 1/63 + 1/61 ≈ 0.032266
    #   b = 1/62        ≈ 0.016129    d = 1/63        ≈ 0.015873
    fused = rrf([["a", "b", "c"], ["c", "a", "d"]])
    assert RRF_K == 60
    assert fused == {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 63}
    assert ranking(fused) == ["a", "c", "b", "d"]


def test_rrf_k_decides_between_one_first_place_and_two_second_places() -> None:
    # b is second in both rankings, a and c first in one each: 2/(k+2) > 1/(k+1) for any k > 0,
    # so b leads; at k = 0 all three score 1 and the tie keeps the order first met.
    rankings = [["a", "b"], ["c", "b"]]
    assert rrf(rankings, k=0) == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert ranking(rrf(rankings, k=0)) == ["a", "b", "c"]
    assert rrf(rankings, k=1) == {"a": 1 / 2, "b": 1 / 3 + 1 / 3, "c": 1 / 2}
    assert ranking(rrf(rankings, k=1)) == ["b", "a", "c"]


def test_rrf_weights_scale_each_ranking() -> None:
    assert rrf([["x"], ["y"]]) == {"x": 1 / 61, "y": 1 / 61}
    assert ranking(rrf([["x"], ["y"]])) == ["x", "y"]  # a tie keeps the order first met
    assert ranking(rrf([["y"], ["x"]])) == ["y", "x"]
    weighted = rrf([["x"], ["y"]], weights=[1.0, 2.0])
    assert weighted == {"x": 1 / 61, "y": 2 / 61}
    assert ranking(weighted) == ["y", "x"]


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf([[], []]) == {}
    assert ranking({}) == []


def test_feedback_nudges_by_a_step_a_vote_up_to_the_cap() -> None:
    fused = {"a": 2.0, "b": 1.0, "c": 0.8}
    assert FEEDBACK_STEP == 0.25  # a quarter of a standard deviation of the query's cosines
    up = nudge(fused, {"c": 1})
    assert up == {"a": 2.0, "b": 1.0, "c": 0.8 + FEEDBACK_STEP}
    assert ranking(up) == ["a", "c", "b"]
    # Past FEEDBACK_CAP (3) votes count as 3, either way: c still stays below a.
    assert FEEDBACK_CAP == 3
    assert nudge(fused, {"c": 10}) == nudge(fused, {"c": 3}) == {**fused, "c": 0.8 + FEEDBACK_STEP * 3}
    assert ranking(nudge(fused, {"c": 10})) == ["a", "c", "b"]
    down = nudge(fused, {"b": -1})
    assert down["b"] == 1.0 - FEEDBACK_STEP
    assert ranking(down) == ["a", "c", "b"]
    assert nudge(fused, {"b": -10}) == nudge(fused, {"b": -3})
    # A vote for a memory that was not a candidate adds nothing; the input is left as it was.
    assert nudge(fused, {"zzz": 3}) == fused
    assert fused == {"a": 2.0, "b": 1.0, "c": 0.8}


# Five memories' cosines and their z-scores within the pool (mean 0.8, standard deviation √0.02).
SEMANTIC = [("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7), ("e", 0.6)]
Z = {i: (c - 0.8) / math.sqrt(0.02) for i, c in SEMANTIC}  # a ≈ 1.41, b ≈ 0.71, c = 0, …


def test_the_semantic_arm_alone_ranks_by_z_score() -> None:
    fused = fuse(SEMANTIC, [], 0.0)
    assert fused.keyword_weight == 0.0
    assert ranking(fused.scores) == ["a", "b", "c", "d", "e"]
    assert all(math.isclose(fused.scores[i], Z[i], abs_tol=1e-9) for i in Z)


def test_keyword_evidence_counts_when_the_semantic_arm_agrees_with_its_first_hit() -> None:
    """The keyword arm's first hit b has a semantic z of 0.71, below the floor of 1: a paraphrased
    question whose keyword hits share a name only; its evidence does not count. Its first hit a
    (z 1.41) makes it count with weight 1.41 - 1: worded like the answer, both arms agree."""
    assert (AGREEMENT_WEIGHT, AGREEMENT_FLOOR) == (1.0, 1.0)
    paraphrased = fuse(SEMANTIC, [("b", 3.0), ("e", 2.0)], mass=2.0)
    assert paraphrased.keyword_weight == 0.0
    assert ranking(paraphrased.scores) == ["a", "b", "c", "d", "e"]
    worded = fuse(SEMANTIC, [("a", 1.0), ("e", 12.0)], mass=2.0)
    weight = Z["a"] - 1.0
    assert math.isclose(worded.keyword_weight, weight)
    assert math.isclose(worded.scores["a"], Z["a"] + weight * 0.5)
    assert math.isclose(worded.scores["e"], Z["e"] + weight * 6.0)  # -1.41 + 2.49: above b
    assert ranking(worded.scores) == ["a", "e", "b", "c", "d"]


def test_a_keyword_hit_the_semantic_pool_missed_starts_from_its_floor() -> None:
    fused = fuse(SEMANTIC, [("a", 2.0), ("x", 2.0)], mass=1.0)
    assert math.isclose(fused.scores["x"], Z["e"] + (Z["a"] - 1.0) * 2.0)  # the pool's lowest z, plus its evidence


def test_without_a_semantic_ranking_the_keyword_ranking_alone() -> None:
    fused = fuse([], [("k1", 4.0), ("k2", 2.0)], mass=4.0)
    assert fused.scores == {"k1": 1.0, "k2": 0.5}


@pytest.mark.parametrize(
    ("cosine", "share", "low", "high"),
    [
        (0.92, 1.0, 0.99, 1.0),  # close in meaning and in words: relevant
        (0.90, None, 0.5, 0.6),  # about where relevant and irrelevant memories meet
        (0.80, None, 0.1, 0.25),  # e5's cosine for an unrelated sentence: not relevant
        (None, 0.2, 0.0, 0.01),
    ],
)
def test_relevance_is_calibrated_between_0_and_1(
    cosine: float | None, share: float | None, low: float, high: float
) -> None:
    assert low <= relevance(cosine, share) <= high


def test_relevance_grows_with_either_arm() -> None:
    assert relevance(0.85, 0.5) > relevance(0.85, None) > relevance(0.80, None)
    assert relevance(0.85, 5.0) == relevance(0.85, 1.5)  # the keyword share counts up to 1.5


def test_fill_skips_what_does_not_fit_and_tries_the_next() -> None:
    costs = {"a": 50, "b": 100, "c": 30, "d": 40}
    # a (50) fits, b (150) does not, c (80) fits, d (120) fits exactly.
    assert fill_budget(["a", "b", "c", "d"], costs, 120) == ["a", "c", "d"]
    assert fill_budget(["a", "b", "c", "d"], costs, 119) == ["a", "c"]
    assert fill_budget(["b", "a", "c"], costs, 1000) == ["b", "a", "c"]


def test_fill_with_nothing_fitting_returns_the_first_alone() -> None:
    costs = {"a": 200, "b": 300}
    assert fill_budget(["b", "a"], costs, 100) == ["b"]
    assert fill_budget([], costs, 100) == []


def test_fill_with_no_budget_returns_nothing() -> None:
    costs = {"a": 1}
    assert fill_budget(["a"], costs, 0) == []
    assert fill_budget(["a"], costs, -5) == []


def test_fill_leaves_out_a_memory_without_a_cost() -> None:
    # "gone" left the index since it was ranked: it neither counts nor stands in as the first.
    costs = {"a": 10, "big": 500}
    assert fill_budget(["gone", "a"], costs, 100) == ["a"]
    assert fill_budget(["gone", "big"], costs, 100) == ["big"]
