"""The keyword retriever (store/keyword.py): BM25 with each bank's own statistics, stopwords out of
the query, English stemming, a cost bound that keeps every term it can afford; the fusion's gate
(store/fusion.py); the migration that re-indexes a store written before them."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwarden.backends.types import RecallQuery
from memwarden.db.database import Database
from memwarden.store import keyword
from memwarden.store.embedder import HashingEmbedder
from memwarden.store.local import LocalStore, RetainItem
from memwarden.store.schema import STORE_MIGRATIONS


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    ledger = Database.open(tmp_path, mirror=False)
    try:
        yield LocalStore(ledger, HashingEmbedder())
    finally:
        ledger.close()


def keyword_docs(store: LocalStore, bank: str, query: str) -> tuple[list[str | None], str | None]:
    answer = asyncio.run(store.recall(bank, RecallQuery(query, max_tokens=100_000, trace=True), arms=("keyword",)))
    return [m.document_id for m in answer.memories], (answer.trace or {}).get("fts_query")


def retain(store: LocalStore, bank: str, texts: dict[str, str]) -> None:
    asyncio.run(store.retain(bank, [RetainItem(content=t, document_id=d) for d, t in texts.items()]))


def test_a_terms_weight_is_its_frequency_in_the_bank_not_in_the_store(store: LocalStore) -> None:
    """'caroline' is in 300 memories of another bank and in one of this one: here it is the rare,
    telling term. Under store-wide statistics it was the common one, and the memories sharing the
    other term ranked first (or 'caroline' was not matched at all)."""
    retain(store, "crowd", {f"c{i}": f"Caroline said hello number {i}." for i in range(300)})
    retain(
        store,
        "quiet",
        {
            "hit": "Caroline joined the support meeting on Tuesday.",
            "s1": "The support rota changes in May.",
            "s2": "Ask support about the refund.",
            "s3": "Support tickets pile up on Mondays.",
            "x": "Lunch was noodles.",
        },
    )
    docs, plan = keyword_docs(store, "quiet", "Caroline support")
    assert docs[0] == "hit"
    assert plan is not None
    assert plan.startswith("carolin(df 1) support(df 4)")


def test_stopwords_leave_the_query_and_english_words_are_stemmed(store: LocalStore) -> None:
    retain(
        store,
        "b",
        {
            "group": "Caroline went to an LGBTQ support group yesterday.",
            "did": "Did you go to the thing? When did it end?",
        },
    )
    docs, plan = keyword_docs(store, "b", "When did Caroline go to the LGBTQ support groups?")
    assert docs == ["group"]  # the other memory shares only stopwords with the question
    assert plan is not None
    assert "group(df 1)" in plan  # "groups" stemmed to the indexed "group"
    assert plan.endswith("stopwords: when did go to the")


def test_a_query_of_stopwords_alone_keeps_them(store: LocalStore) -> None:
    retain(store, "b", {"a": "To be or not to be.", "z": "Lunch was noodles."})
    docs, _ = keyword_docs(store, "b", "to be")
    assert docs == ["a"]


def test_the_cost_bound_leaves_out_the_banks_commonest_terms_first(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = {f"m{i}": f"meeting notes {i}" for i in range(40)}
    texts["target"] = "meeting notes about the zeppelin budget"
    retain(store, "b", texts)
    monkeypatch.setattr(keyword, "MAX_POSTINGS", 10)  # room for the rare terms, not for "meeting"
    docs, plan = keyword_docs(store, "b", "zeppelin budget meeting")
    assert docs == ["target"]
    assert plan is not None
    assert "past the cost bound: meet" in plan
    monkeypatch.setattr(keyword, "MAX_POSTINGS", 10_000)
    docs, plan = keyword_docs(store, "b", "zeppelin budget meeting")
    assert docs[0] == "target"
    assert len(docs) == 41  # every memory holds "meeting": scored, after the target
    assert plan is not None
    assert "past the cost bound" not in plan


def test_only_valid_memories_of_the_bank_rank(store: LocalStore) -> None:
    retain(store, "b", {"keep": "The zeppelin hangar is in Friedrichshafen.", "gone": "The zeppelin is grey."})
    retain(store, "other", {"o": "A zeppelin flew over."})
    memory = next(
        m for m in asyncio.run(store.recall("b", RecallQuery("zeppelin"))).memories if m.document_id == "gone"
    )
    asyncio.run(store.update_unit("b", memory.id, {"state": "invalidated", "reason": "test"}))
    docs, _ = keyword_docs(store, "b", "zeppelin")
    assert docs == ["keep"]


def test_a_store_written_before_the_per_bank_index_is_re_indexed(tmp_path: Path) -> None:
    """Migration 0010 rewrites every memory's terms with its bank's prefix and stems, and rebuilds
    the full-text index: the keyword arm finds what the old store held."""
    ledger = Database.open(tmp_path, mirror=False)
    try:
        before = [step for step in STORE_MIGRATIONS if step[0] < "0010"]
        ledger.migrate_sync(before)

        def old_rows(db: sqlite3.Connection) -> None:
            for n, (bank, text) in enumerate([("b", "Backups run nightly at 04:30."), ("c", "Backups are weekly.")]):
                db.execute(
                    "INSERT INTO store_banks (bank_id, created_at, updated_at) VALUES (?, 'x', 'x')"
                    " ON CONFLICT DO NOTHING",
                    (bank,),
                )
                db.execute(
                    "INSERT INTO store_units (id, bank_id, document_id, text, terms, created_at, updated_at, tokens)"
                    " VALUES (?, ?, ?, ?, ?, 'x', 'x', 5)",
                    (f"u{n}", bank, f"d{n}", text, text.casefold()),
                )

        asyncio.run(ledger.write(old_rows))
        store = LocalStore(ledger, HashingEmbedder())  # attaching applies 0010
        docs, plan = keyword_docs(store, "b", "nightly backups")
        assert docs == ["d0"]
        assert plan is not None
        assert plan.startswith("backup(df 1) night(df 1)") or plan.startswith("night(df 1) backup(df 1)")
        terms = asyncio.run(ledger.read(lambda db: db.execute("SELECT terms, term_count FROM store_units").fetchall()))
        assert all(len(row[0].split()) == row[1] for row in terms)
    finally:
        ledger.close()


def test_without_a_semantic_ranking_every_keyword_hit_ranks(tmp_path: Path) -> None:
    """A bank whose vectors wait for a re-embed (another embedder configured since) is searched by
    keyword alone: its weak keyword hits are not gated out as they are when fused."""
    first = Database.open(tmp_path, mirror=False)
    try:
        store = LocalStore(first, HashingEmbedder(dim=384))
        retain(store, "b", {"strong": "The zeppelin budget meeting is Tuesday.", "weak": "Budget notes, v2."})
    finally:
        first.close()
    ledger = Database.open(tmp_path, mirror=False)
    try:
        store = LocalStore(ledger, HashingEmbedder(dim=256))  # another embedder: the bank's vectors are out
        answer = asyncio.run(store.recall("b", RecallQuery("zeppelin budget", max_tokens=100_000, trace=True)))
        assert [m.document_id for m in answer.memories] == ["strong", "weak"]
        assert (answer.trace or {})["fusion"] == "the keyword ranking alone"
    finally:
        ledger.close()
