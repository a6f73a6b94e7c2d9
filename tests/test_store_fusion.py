"""Recall's fusion and budget fill (store/fusion.py): pure functions, checked on small hand-computed
inputs without a database."""

from __future__ import annotations

from memwarden.store.fusion import FEEDBACK_CAP, FEEDBACK_STEP, RRF_K, fill_budget, nudge, ranking, rrf


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
    # a was first in both retrievers, b second and c third in one.
    fused = {"a": 2 / 61, "b": 1 / 62, "c": 1 / 63}
    assert FEEDBACK_STEP == 0.25 / 61  # a quarter of a first place in one retriever
    up = nudge(fused, {"c": 1})
    assert up == {"a": 2 / 61, "b": 1 / 62, "c": 1 / 63 + FEEDBACK_STEP}
    assert ranking(up) == ["a", "c", "b"]
    # Past FEEDBACK_CAP (3) votes count as 3, either way: c still stays below a.
    assert FEEDBACK_CAP == 3
    assert nudge(fused, {"c": 10}) == nudge(fused, {"c": 3}) == {**fused, "c": 1 / 63 + FEEDBACK_STEP * 3}
    assert ranking(nudge(fused, {"c": 10})) == ["a", "c", "b"]
    down = nudge(fused, {"b": -1})
    assert down["b"] == 1 / 62 - FEEDBACK_STEP
    assert ranking(down) == ["a", "c", "b"]
    assert nudge(fused, {"b": -10}) == nudge(fused, {"b": -3})
    # A vote for a memory that was not a candidate adds nothing; the input is left as it was.
    assert nudge(fused, {"zzz": 3}) == fused
    assert fused == {"a": 2 / 61, "b": 1 / 62, "c": 1 / 63}


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
