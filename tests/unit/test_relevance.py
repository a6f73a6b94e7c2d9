"""A recalled memory's relevance (``scores.reranker`` from the self-hosted store, the Mem0 front's
``score``): calibrated on e5's cosines, so that a threshold separates a memory a question is about
from the best an unrelated question finds — across queries, which the fused score cannot do."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwarden.backends.types import Memory, RecallQuery
from memwarden.db.database import Database
from memwarden.fronts.mem0.reads import _score
from memwarden.store.embedder import E5Embedder, HashingEmbedder
from memwarden.store.local import LocalStore, RetainItem

FACTS = {
    "job": "Maya started as a product designer at Ledgerly, a fintech in Portland, in March.",
    "dog": "Tom adopted a rescue greyhound called Biscuit last summer.",
    "diet": "Priya has been vegetarian since college and avoids eggs too.",
    "car": "Walt traded his Buick for a used Ford pickup truck.",
    "swim": "Lina swims at the community pool every Tuesday and Thursday morning.",
    "zh": "小林下个月从杭州搬到成都，新工作在一家游戏公司。",
}


@pytest.fixture(scope="module")
def e5_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStore]:
    ledger = Database.open(tmp_path_factory.mktemp("relevance"), mirror=False)
    try:
        store = LocalStore(ledger, E5Embedder())
        asyncio.run(store.retain("b", [RetainItem(content=t, document_id=d) for d, t in FACTS.items()]))
        yield store
    finally:
        ledger.close()


def best(store: LocalStore, query: str) -> Memory:
    return asyncio.run(store.recall("b", RecallQuery(query))).memories[0]


@pytest.mark.parametrize(
    ("query", "document"),
    [
        ("Where does Maya work?", "job"),
        ("What kind of dog does Tom have?", "dog"),
        ("Which days does Lina go swimming?", "swim"),
        ("小林要搬去哪里？", "zh"),
    ],
)
def test_a_relevant_memory_scores_above_half_and_an_unrelated_querys_best_below(
    e5_store: LocalStore, query: str, document: str
) -> None:
    hit = best(e5_store, query)
    assert hit.document_id == document
    assert hit.extra["scores"]["reranker"] >= 0.5
    assert _score(hit, 0) == hit.extra["scores"]["reranker"]  # the Mem0 front's score


@pytest.mark.parametrize(
    "query",
    ["What is the boiling point of tungsten?", "How do I configure a Kubernetes ingress?", "量子计算的原理是什么？"],
)
def test_an_unrelated_questions_best_memory_scores_below_half(e5_store: LocalStore, query: str) -> None:
    assert best(e5_store, query).extra["scores"]["reranker"] < 0.5


def test_no_relevance_without_the_embedder_it_was_calibrated_for(tmp_path: Path) -> None:
    ledger = Database.open(tmp_path, mirror=False)
    try:
        store = LocalStore(ledger, HashingEmbedder())
        asyncio.run(store.retain("b", [RetainItem(content=FACTS["dog"], document_id="dog")]))
        hit = asyncio.run(store.recall("b", RecallQuery("Tom's dog"))).memories[0]
        assert hit.extra["scores"]["reranker"] is None
    finally:
        ledger.close()
