"""The self-hosted store on PostgreSQL answers as on SQLite: the same memories written to a store
on each engine, the keyword arm ranks them alike with the same BM25 scores (the posting list and
FTS5 read the same terms), the semantic arm (pgvector's HNSW against the in-memory index) finds the
same nearest memories, and hybrid recall returns the same answers. Real PostgreSQL with pgvector."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memwarden.backends.types import RecallQuery
from memwarden.db.database import Database
from memwarden.store.embedder import HashingEmbedder
from memwarden.store.local import LocalStore, RetainItem
from testing.postgres import drop_database, fresh_database

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SUBJECTS = ["the billing service", "Alice", "the staging cluster", "our mobile app", "服务 svc-7", "the nightly backup"]
VERBS = ["runs on", "moved to", "depends on", "was migrated to", "prefers", "部署在"]
OBJECTS = [
    "PostgreSQL 16",
    "the eu-west region",
    "dark roast coffee",
    "three nodes with 16 GB RAM each",
    "内网端口 9000",
    "a weekly release train",
    "Kubernetes 1.29",
    "the search namespace",
]
QUERIES = [
    "Which region does the billing service run in?",
    "What does Alice prefer?",
    "staging cluster nodes RAM",
    "服务 端口",
    "nightly backup PostgreSQL",
    "mobile app release",
    "Kubernetes",
    "the",  # stopwords alone
    "nothing matches zebra",
]


def corpus() -> dict[str, list[str]]:
    rng = random.Random(7)
    banks: dict[str, list[str]] = {"a": [], "b": []}
    for bank, n in (("a", 240), ("b", 60)):
        for i in range(n):
            fact = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
            banks[bank].append(fact + ("" if i % 3 else f" since release {i}"))
    return banks


@pytest.fixture
async def stores(tmp_path: Path, postgres_server: str) -> AsyncIterator[tuple[LocalStore, LocalStore]]:
    url = fresh_database(postgres_server)
    lite = Database.open(tmp_path / "sqlite", mirror=False)
    pg = Database.open(tmp_path / "pg", mirror=False, url=url)
    try:
        pair = LocalStore(lite, HashingEmbedder()), LocalStore(pg, HashingEmbedder())
        for store in pair:
            for bank, texts in corpus().items():
                await store.retain(
                    bank, [RetainItem(content=t, document_id=f"{bank}-{i}") for i, t in enumerate(texts)]
                )
        yield pair
    finally:
        lite.close()
        pg.close()
        drop_database(url)


async def answer(store: LocalStore, bank: str, query: str, arms: tuple[str, ...]) -> list[tuple[str | None, float]]:
    got = await store.recall(bank, RecallQuery(query, max_tokens=100_000, trace=True), arms=arms)
    which = "keyword" if arms == ("keyword",) else "semantic" if arms == ("semantic",) else "final"
    return [(m.document_id, round(float(m.extra["scores"][which] or 0.0), 5)) for m in got.memories]


async def test_each_arm_and_the_fusion_answer_alike_on_both_engines(stores: tuple[LocalStore, LocalStore]) -> None:
    lite, pg = stores
    answered = 0
    for bank in ("a", "b"):
        for query in QUERIES:
            for arms in (("keyword",), ("semantic",), ("semantic", "keyword")):
                on_sqlite = await answer(lite, bank, query, arms)
                on_pg = await answer(pg, bank, query, arms)
                if arms == ("keyword",):  # the same terms, counts and arithmetic: the same list
                    assert on_pg == on_sqlite, (bank, query)
                else:  # float32 in pgvector and in numpy: the same memories, scores within 1e-4
                    # (every memory of the bank is returned: ties in order aside, the same answer)
                    assert dict(on_pg) == pytest.approx(dict(on_sqlite), abs=1e-4), (bank, query, arms)
                answered += bool(on_sqlite)
    assert answered >= 40  # most queries find something: the comparison is not of empty answers


async def test_deletes_edits_and_archives_reach_both_arms_on_postgresql(stores: tuple[LocalStore, LocalStore]) -> None:
    _, pg = stores
    query = RecallQuery("Which region does the billing service run in?", max_tokens=100_000)
    first = (await pg.recall("a", query)).memories[0]
    await pg.update_unit("a", first.id, {"text": "the billing service runs on an abacus in a basement"})
    edited = await pg.recall("a", RecallQuery("abacus basement", max_tokens=100_000))
    assert edited.memories[0].id == first.id
    await pg.update_unit("a", first.id, {"state": "invalidated"})
    for arms in (("keyword",), ("semantic",)):
        after = await pg.recall("a", RecallQuery("abacus basement", max_tokens=100_000), arms=arms)
        assert first.id not in [m.id for m in after.memories]
    await pg.delete_document("a", "a-1")
    gone = await pg.recall("a", RecallQuery(corpus()["a"][1], max_tokens=100_000))
    assert "a-1" not in [m.document_id for m in gone.memories]


async def test_an_embedder_that_learns_its_width_gets_its_index_at_the_first_write(
    tmp_path: Path, postgres_server: str
) -> None:
    """An OpenAI-compatible embedder knows its width only once it has answered: the store on
    PostgreSQL starts without its HNSW index, makes it with the first write, and searches it."""
    from memwarden.store.embedder import OpenAIEmbedder
    from memwarden.store.pg_vectors import index_name
    from tests.fake_openai import serve_fake_llm

    url = fresh_database(postgres_server)
    ledger = Database.open(tmp_path, mirror=False, url=url)
    try:
        with serve_fake_llm() as (base, _):
            embedder = OpenAIEmbedder(base, "fake-embed")
            store = LocalStore(ledger, embedder)  # width unknown (0) here: no index yet, and no error

            def indexes(db: object) -> list[str]:
                return [
                    r[0]
                    for r in db.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'store_units_hnsw_%'")
                ]  # type: ignore[attr-defined]

            assert await ledger.read(indexes) == []
            texts = corpus()["b"]
            await store.retain("b", [RetainItem(content=t, document_id=f"b-{i}") for i, t in enumerate(texts)])
            assert await ledger.read(indexes) == [index_name(embedder.name, embedder.dim)]
            got = await store.recall("b", RecallQuery(texts[3], max_tokens=100_000), arms=("semantic",))
            assert got.memories[0].text == texts[3]
            embedder._client.close()
    finally:
        ledger.close()
        drop_database(url)


async def test_a_long_blob_and_a_memory_without_terms_are_stored_and_counted_alike(
    stores: tuple[LocalStore, LocalStore],
) -> None:
    """A 3,000-character hex run is one term (longer than a B-tree entry holds: cut in the posting
    list, where it failed the write); a memory of emoji alone has no terms. Both are stored on both
    engines, found by their other words, and the health check's counts agree."""
    blob = "deploy key fingerprint " + "ab12" * 750
    for store in stores:
        await store.retain(
            "c", [RetainItem(content=blob, document_id="blob"), RetainItem(content="🎉🎉", document_id="emoji")]
        )
        got = await store.recall("c", RecallQuery("deploy key fingerprint", max_tokens=100_000), arms=("keyword",))
        assert [m.document_id for m in got.memories] == ["blob"]
        counts = await store.index_counts("")
        assert counts["all_banks_fulltext_entries"] == counts["all_banks_rows"]
