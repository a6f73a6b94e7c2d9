"""Hybrid recall: the semantic retriever (the bank's vector index, :mod:`store.index_cache`) and the
keyword retriever (:mod:`store.keyword`) run at once; their candidates pass the status, type and tag
filters; :mod:`store.fusion` fuses the two rankings, nudges them by feedback and fills the
``max_tokens`` budget; the picked rows are read by primary key and shaped as Hindsight's answer.

Reads run on the ledger's reader threads, embedding and vector search on worker threads, never on
the event loop.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from memwarden.backends.types import Memory, Recalled, RecallQuery
from memwarden.db.common import on_postgres
from memwarden.db.database import Database
from memwarden.policies import tagfilter
from memwarden.store.banks import require_bank
from memwarden.store.documents import recalled_chunks
from memwarden.store.embedder import Embedder, Vector
from memwarden.store.entities import entity_id, key_of
from memwarden.store.explain import explain_recall
from memwarden.store.feedback import Feedback
from memwarden.store.fusion import (
    AGREEMENT_FLOOR,
    AGREEMENT_WEIGHT,
    CALIBRATED_FOR,
    fill_budget,
    fuse,
    nudge,
    ranking,
    relevance,
)
from memwarden.store.index_cache import IndexCache
from memwarden.store.keyword import TermStats, keyword_arm
from memwarden.store.pg_vectors import PgBankIndex
from memwarden.store.shapes import loads
from memwarden.store.text import query_terms
from memwarden.store.vectors import BankIndex

BUDGET_POOL = {"low": 100, "mid": 300, "high": 1000}
# What recall reads of a candidate (not its vector: the index has it), as a plain tuple in this
# order: RecallRow's fields, and the unpacking where recall shapes its answer.
RECALL_COLUMNS = (
    "id, text, context, fact_type, tags, metadata, document_id, mentioned_at, occurred_start, occurred_end,"
    " chunk_id, entities, state"
)
RecallRow = tuple[str, str, str, str, str, str, str | None, str | None, str | None, str | None, str | None, str, str]
Hits = list[tuple[str, float]]  # a retriever's ranking: (memory id, score), best first
Embedding = asyncio.Future[tuple[Vector, Hits | None]]


def embed_and_search(embedder: Embedder, query: str, loaded: BankIndex | None, pool: int) -> tuple[Vector, Hits | None]:
    """The query's vector and, when the bank's index was loaded already, its ``pool`` nearest
    memories, on the same worker thread (a hand-off between threads costs ~0.7 ms on this kind of
    machine)."""
    vector = embedder.query(query)
    return vector, None if loaded is None else loaded.search(vector, pool)


async def semantic_arm(
    embedding: Embedding | None,
    index: BankIndex | PgBankIndex,
    loaded: BankIndex | None,
    pool: int,
    limit: int,
    seq_of: dict[str, int],
    cost_of: dict[str, int],
) -> Hits:
    """The semantic retriever's ``limit`` best: the search run beside the embedding when it was
    of this index for this many, else a search of ``index`` on a worker thread — or, on
    PostgreSQL, in the database (its hits' row keys and costs into ``seq_of`` and ``cost_of``)."""
    if embedding is None:
        return []
    vector, searched = await embedding
    if isinstance(index, PgBankIndex):
        found = await index.search(vector, limit)
        seq_of.update(found.seq)
        cost_of.update(found.tokens)
        return found.ranked
    if searched is not None and index is loaded and limit == pool:
        return searched
    return await asyncio.to_thread(index.search, vector, limit)


def filter_rows(
    db: sqlite3.Connection,
    *,
    ids: list[str],
    types: Sequence[str] | None,
    predicate: tagfilter.Predicate | None,
) -> tuple[set[str], dict[str, str]]:
    """The candidates the status, ``types`` and tag filters admit, and the others' reasons."""
    kept: set[str] = set()
    excluded: dict[str, str] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT id, fact_type, tags, state FROM store_units WHERE id IN ({marks})"  # noqa: S608
        for r in db.execute(sql, chunk):
            if r["state"] != "valid":
                excluded[r["id"]] = f"status: {r['state']}"
            elif types is not None and r["fact_type"] not in types:
                excluded[r["id"]] = f"type {r['fact_type']} not in types {list(types)}"
            elif predicate is not None and not predicate(frozenset(json.loads(r["tags"]))):
                excluded[r["id"]] = "tag filter"
            else:
                kept.add(r["id"])
    return kept, excluded


def shape(row: RecallRow, scores: dict[str, float | None]) -> Memory:
    """A fetched row and its scores as a recall hit."""
    memory_id, text, context, fact_type, tags, metadata, document_id, mentioned, start, end, chunk, named, _ = row
    return Memory(
        memory_id,
        text,
        fact_type,
        document_id,
        context or None,
        () if tags == "[]" else tuple(loads(tags, [])),
        loads(metadata, {}),
        mentioned,
        start,
        end,
        None,
        {
            "entities": None if named == "{}" else list(loads(named, {}).values()) or None,
            "chunk_id": chunk,
            "source_fact_ids": None,
            "scores": scores,
            "attachments": None,
        },
    )


def fetch(
    db: sqlite3.Connection, *, picked: list[str], seq_of: Mapping[str, int], index: BankIndex | PgBankIndex
) -> list[RecallRow]:
    """The picked rows, in their order, by primary key (the row key the full-text arm read, else
    the vector index's); one archived or replaced since it was ranked is left out."""
    if on_postgres(db):
        cursor: Any = db
    else:
        cursor = db.cursor()
        cursor.row_factory = None  # plain tuples: ~200 rows, each field read once
    found: dict[str, RecallRow] = {}
    known, seq = seq_of.get, index.seq.get
    keys = [k for m in picked if (k := known(m)) is not None or (k := seq(m)) is not None]
    for start in range(0, len(keys), 900):  # under SQLite's limit on bound variables
        chunk = keys[start : start + 900]
        sql = f"SELECT {RECALL_COLUMNS} FROM store_units WHERE seq IN ({','.join('?' * len(chunk))})"  # noqa: S608
        found.update((r[0], r) for r in cursor.execute(sql, chunk))
    return [r for m in picked if (r := found.get(m)) is not None and r[-1] == "valid"]  # r[-1]: state


async def recall(
    ledger: Database,
    embedder: Embedder,
    indexes: IndexCache,
    feedback: Feedback,
    terms: TermStats,
    bank: str,
    request: RecallQuery,
    *,
    arms: tuple[str, ...] = ("semantic", "keyword"),
    explain: bool = False,
) -> Recalled:
    """Hybrid recall, in neutral values (Hindsight's other answer fields in ``extra``; the store's
    Hindsight app writes it as Hindsight's JSON). ``arms`` selects the retrievers (both by default; one alone for the
    retrieval-quality benchmark). With ``explain``, the answer also carries ``explain``: the
    query vector's head, the full-text query, and every candidate either retriever produced
    with its ranks and scores, returned or excluded and why (``extra["explain"]``)."""
    query = request.text
    types = request.kinds
    predicate = tagfilter.build(request.tags.tags, request.tags.match or "any", request.tags.groups)
    pool = BUDGET_POOL.get(request.budget or "mid", 300)
    max_tokens = 4096 if request.max_tokens is None else request.max_tokens
    # The query is embedded while the bank is looked up and the keyword arm runs (neither
    # needs the vector): the embedding is most of a recall's time. When the bank's vector index
    # is loaded already, the same thread searches it too.
    loaded = indexes.loaded(bank)
    embedding = (
        asyncio.ensure_future(asyncio.to_thread(embed_and_search, embedder, query, loaded, pool))
        if query.strip() and "semantic" in arms
        else None
    )
    try:
        await require_bank(ledger, bank)
    except BaseException:
        if embedding is not None:
            embedding.cancel()
        raise
    index = await indexes.get(bank)
    words = query_terms(query) if "keyword" in arms else []
    fts: str | None = None
    # Candidates' row keys and token costs, from the full-text arm (the vector index has its own).
    seq_of: dict[str, int] = {}
    cost_of: dict[str, int] = {}
    excluded: dict[str, str] = {}

    limit = pool
    for _ in range(4):  # widen the pools when the filters leave too few
        # The two retrievers run at once (numpy and SQLite both release the GIL).
        semantic, hits = await asyncio.gather(
            semantic_arm(embedding, index, loaded, pool, limit, seq_of, cost_of),
            ledger.read(partial(keyword_arm, bank=bank, words=words, limit=limit, terms=terms)),
        )
        lexical, fts = hits.ranked, hits.fts
        seq_of.update(hits.seq)
        cost_of.update(hits.tokens)
        candidates = list(dict.fromkeys([*(i for i, _ in semantic), *(i for i, _ in lexical)]))
        if types is not None or predicate is not None or explain:
            kept, dropped = await ledger.read(partial(filter_rows, ids=candidates, types=types, predicate=predicate))
            excluded.update(dropped)
        else:  # both retrievers hold only this bank's valid memories: nothing to look up
            kept = set(candidates)
        exhausted = len(semantic) < limit and len(lexical) < limit
        if len(kept) >= min(pool, 50) or exhausted:
            break
        limit *= 4
    sem = {i: s for i, s in semantic if i in kept}
    lex = {i: s for i, s in lexical if i in kept}
    votes = await feedback.votes(bank)
    # The arms' rankings after the filters, best first; then the fusion (store/fusion.py).
    fusion = fuse(sorted(sem.items(), key=lambda kv: -kv[1]), sorted(lex.items(), key=lambda kv: -kv[1]), hits.mass)
    both = bool(sem)
    fused = nudge(fusion.scores, votes) if votes else fusion.scores
    top_lex = max(lex.values(), default=0.0) or 1.0
    # Token costs: the full-text arm's, else the vector index's (a memory that left the index since
    # it was ranked, archived or replaced, has none).
    # A plain dict for the fill's lookups (a ChainMap's pure-Python get cost ~0.4 ms a recall).
    costs = {m: c for m in fused if (c := cost_of.get(m, index.tokens.get(m))) is not None}
    picked = fill_budget(ranking(fused), costs, max_tokens)
    chosen = await ledger.read(partial(fetch, picked=picked, seq_of=seq_of, index=index))
    used = sum(costs.get(r[0], 0) for r in chosen)
    results: list[Memory] = []
    calibrated = embedder.name == CALIBRATED_FOR
    mass = hits.mass
    for row in chosen:
        memory_id = row[0]
        cosine = sem.get(memory_id)
        keyword = lex.get(memory_id)
        scores = {
            "final": round(fused[memory_id], 6),
            # No cross-encoder: memwarden's calibrated relevance, 0..1 (store/fusion.py: relevance),
            # fitted on e5's cosines; with another embedder, or for a hit the semantic arm did not
            # rank, none (the Mem0 front then falls back to the arms' own scores).
            "reranker": relevance(cosine, keyword / mass if keyword is not None and mass else None)
            if calibrated and cosine is not None
            else None,
            "semantic": cosine,
            "keyword": keyword / top_lex if keyword is not None else None,
        }
        results.append(shape(row, scores))
    trace = None
    if request.trace:
        trace = {
            "engine": "memwarden-local",
            "embedder": embedder.name,
            "vector_index": index.kind,
            "fts_query": fts,
            "semantic_candidates": len(semantic),
            "keyword_candidates": len(lexical),
            "admitted": len(kept),
            "excluded_by_filters": len(candidates) - len(kept),
            "fusion": fusion_note(fusion.keyword_weight, len(lex), hits.mass, both),
            "max_tokens": max_tokens,
            "tokens_used": used,
        }
    extra: dict[str, Any] = {"entities": None, "chunks": None, "source_facts": None, "source_facts_truncated": None}
    include = request.extra.get("include")
    if not isinstance(include, Mapping):
        include = {}
    if isinstance(include.get("entities", {}), Mapping):  # Hindsight's default: included
        extra["entities"] = recalled_entities(bank, results)
    if isinstance(include.get("source_facts"), Mapping):
        # The facts the observation results cite: the store keeps no observations, so none (as
        # Hindsight answers before it has consolidated any).
        extra["source_facts_truncated"] = False
    wanted = include.get("chunks")
    if isinstance(wanted, Mapping):  # {"max_tokens": n} (Hindsight's ChunkIncludeOptions), null: none
        budget = wanted.get("max_tokens")
        extra["chunks"] = await ledger.read(
            partial(
                recalled_chunks,
                bank=bank,
                chunk_ids=[r[10] for r in chosen if r[10]],  # r[10]: chunk_id (RECALL_COLUMNS)
                max_tokens=budget if isinstance(budget, int) else 8192,
            )
        )
    if explain:
        extra["explain"] = await explain_recall(
            ledger,
            embedder.name,
            None if embedding is None else (await embedding)[0],
            fts,
            semantic,
            lexical,
            fused,
            [r[0] for r in chosen],
            excluded,
            max_tokens,
            used,
            votes,
            fusion_note(fusion.keyword_weight, len(lex), hits.mass, both),
        )
    return Recalled(results, trace, extra)


def recalled_entities(bank: str, results: Sequence[Memory]) -> dict[str, Any] | None:
    """``include.entities``: the entities the results name, by name, as Hindsight answers them
    (the store writes no observations of an entity); None when they name none."""
    out: dict[str, Any] = {}
    for memory in results:
        for name in memory.extra.get("entities") or ():
            if name not in out:
                out[name] = {"entity_id": entity_id(bank, key_of(name)), "canonical_name": name, "observations": []}
    return out or None


def fusion_note(weight: float, keyword: int, mass: float, both: bool) -> str:
    """How the two rankings were fused, for the trace and explain."""
    if not both:
        return "the keyword ranking alone"
    return (
        f"the semantic arm's cosines as z-scores, plus {weight:.2f} x each of the {keyword} keyword hits' BM25 over"
        f" {mass:.2f} (the query's idf mass); the keyword weight is {AGREEMENT_WEIGHT:g} x (the semantic z-score of"
        f" the keyword arm's first hit - {AGREEMENT_FLOOR:g}), at least 0"
    )
