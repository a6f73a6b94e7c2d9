"""Retrieval quality of the self-hosted store on long multi-session conversations, per arm and fused,
beside plain BM25 over the same turns.

The data, ``tests/data/recall_conversations.jsonl``, was written for this by writers who never saw
the store's code: 12 conversations between two people (6 English, 6 Chinese; friends, colleagues,
family, a coach and a client, founders, neighbours), 8–12 dated sessions each, 2,316 turns; 540
questions asked later, each with the turns that answer it (facts, when things happened, people's
preferences, facts spread over two sessions, and the current state after a change), about three in
four sharing at most one content word with their evidence. Split once by conversation: ``tune``
(en-1…4, zh-1…4: what the keyword arm and the fusion were chosen on) and ``eval`` (en-5, en-6,
zh-5, zh-6: only measured).

Each conversation is a bank of its own in one store (so per-bank statistics matter), each turn an
item (``Speaker: text``, the session's date as its timestamp, its turn id as its document id).
A question is a hit at k when one of its evidence turns is among the first k memories recalled
(``budget: mid``, no token limit); MRR over the first 100. R@5 is also reported per kind of question
and for questions that share at most one content term with their evidence and those that share
more (the keyword arm carries the second kind and cannot help with the first). Plain BM25 is SQLite FTS5 (``porter
unicode61``, one table per conversation) over the same terms the store indexes (Chinese as
overlapping bigrams), English stopwords left out of the query, nothing else. Latency: each
question's recall through the store API, in process, p50 and p99 per arm.

Usage: python -m bench.retrieval [--json FILE] [--split tune|eval|all] [--embedder e5|hashing]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import DATA, machine, markdown_table, write_json
from memwarden.backends.types import RecallQuery
from memwarden.db.database import Database
from memwarden.store.embedder import Embedder, make_embedder
from memwarden.store.local import LocalStore, RetainItem
from memwarden.store.stopwords import ENGLISH, is_stopword
from memwarden.store.text import terms

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"\w+")

CONVERSATIONS = DATA / "recall_conversations.jsonl"
EVAL = {"en-5", "en-6", "zh-5", "zh-6"}
ARMS = {"keyword": ("keyword",), "semantic": ("semantic",), "fused": ("semantic", "keyword")}
DEPTH = 100


@dataclass
class Question:
    conv: str
    lang: str
    kind: str
    text: str
    evidence: set[str]
    ranks: dict[str, int | None] = field(default_factory=dict)  # system → rank of the first evidence (1-based)
    overlap: int = 0  # content terms (stemmed, Chinese bigrams) shared with the evidence turns


def load() -> tuple[list[dict[str, Any]], list[Question]]:
    rows = [json.loads(line) for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    conversations = [r for r in rows if r["type"] == "conversation"]
    said = {i: t for c in conversations for i, t, _ in turns(c)}
    questions = []
    for r in rows:
        if r["type"] == "question":
            evidence = {w for e in r["evidence"] for w in terms(said[e])}
            content = {w for w in terms(r["question"]) if not is_stopword(w)}
            questions.append(
                Question(
                    r["conv"], r["lang"], r["kind"], r["question"], set(r["evidence"]), overlap=len(content & evidence)
                )
            )
    return conversations, questions


def turns(conversation: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(turn id, ``Speaker: text``, date) of every turn."""
    return [(t["id"], f"{t['speaker']}: {t['text']}", s["date"]) for s in conversation["sessions"] for t in s["turns"]]


def first_hit(docs: list[str | None], evidence: set[str]) -> int | None:
    return next((n for n, d in enumerate(docs[:DEPTH], start=1) if d in evidence), None)


def bigrams(text: str) -> str:
    """``text`` with every Chinese run written as its overlapping bigrams (FTS5's own tokenizers
    cannot search Chinese words); the rest left to the porter tokenizer."""
    return _CJK_RUN.sub(lambda m: " " + " ".join(m[0][i : i + 2] for i in range(max(1, len(m[0]) - 1))) + " ", text)


def plain_bm25(conversations: list[dict[str, Any]], questions: list[Question]) -> None:
    db = sqlite3.connect(":memory:")
    for c in conversations:
        table = "c_" + c["conv"].replace("-", "_")
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(id UNINDEXED, terms, tokenize='porter unicode61')")
        rows = [(i, bigrams(t)) for i, t, _ in turns(c)]
        db.executemany(f"INSERT INTO {table} (id, terms) VALUES (?, ?)", rows)  # noqa: S608
    for q in questions:
        words = [w for w in dict.fromkeys(_WORD.findall(bigrams(q.text).casefold())) if w not in ENGLISH]
        if not words:
            q.ranks["plain BM25"] = None
            continue
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        table = "c_" + q.conv.replace("-", "_")
        sql = f"SELECT id FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"  # noqa: S608
        docs = [r[0] for r in db.execute(sql, (match, DEPTH))]
        q.ranks["plain BM25"] = first_hit(docs, q.evidence)


async def store_runs(
    conversations: list[dict[str, Any]],
    questions: list[Question],
    embedder: str | Embedder,
    arms: dict[str, tuple[str, ...]] = ARMS,
) -> dict[str, list[float]]:
    """Every question through each arm of the store (an embedder by name, or one already built);
    the recall latencies (ms) per arm."""
    latency: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Database.open(Path(tmp), mirror=False)
        try:
            store = LocalStore(ledger, make_embedder(embedder) if isinstance(embedder, str) else embedder)
            for c in conversations:
                items = [RetainItem(content=t, document_id=i, timestamp=f"{d}T12:00:00Z") for i, t, d in turns(c)]
                await store.retain(c["conv"], items)
            for c in conversations:
                await store.recall(c["conv"], RecallQuery("warm up"))  # loads each bank's vector index
            for q in questions:
                for name, chosen in arms.items():
                    started = time.perf_counter()
                    answer = await store.recall(
                        q.conv, RecallQuery(q.text, budget="mid", max_tokens=1_000_000), arms=chosen
                    )
                    latency[name].append((time.perf_counter() - started) * 1000)
                    q.ranks[name] = first_hit([m.document_id for m in answer.memories], q.evidence)
        finally:
            ledger.close()
    return latency


def scores(questions: list[Question], system: str) -> dict[str, float]:
    ranks = [q.ranks.get(system) for q in questions]
    n = len(ranks) or 1
    return {
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
        "MRR": sum(1 / r for r in ranks if r is not None) / n,
    }


def report(questions: list[Question], latency: dict[str, list[float]]) -> dict[str, Any]:
    systems = [*ARMS, "plain BM25"]
    rows = []
    for split in ("tune", "eval"):
        for lang in ("all", "en", "zh"):
            sub = [q for q in questions if (q.conv in EVAL) == (split == "eval") and (lang == "all" or q.lang == lang)]
            if not sub:
                continue
            for system in systems:
                rows.append(
                    {"split": split, "lang": lang, "system": system, "questions": len(sub), **scores(sub, system)}
                )
    kinds = []
    for kind in sorted({q.kind for q in questions}):
        sub = [q for q in questions if q.kind == kind]
        kinds.append({"kind": kind, "questions": len(sub), **{s: scores(sub, s)["R@5"] for s in systems}})
    # Questions worded like their answer and paraphrased ones: which arm carries them differs.
    for name, test in (("shares ≤ 1 content term", lambda q: q.overlap <= 1), ("shares ≥ 2", lambda q: q.overlap >= 2)):
        for split in ("tune", "eval"):
            sub = [q for q in questions if test(q) and (q.conv in EVAL) == (split == "eval")]
            kinds.append(
                {"kind": f"{split}: {name}", "questions": len(sub), **{s: scores(sub, s)["R@5"] for s in systems}}
            )
    lat = {
        name: {"p50_ms": statistics.median(ts), "p99_ms": sorted(ts)[max(0, int(len(ts) * 0.99) - 1)]}
        for name, ts in latency.items()
        if ts
    }
    return {"rows": rows, "kinds": kinds, "latency": lat}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    parser.add_argument("--embedder", default="e5", choices=["e5", "hashing"])
    args = parser.parse_args()
    conversations, questions = load()
    plain_bm25(conversations, questions)
    latency = asyncio.run(store_runs(conversations, questions, args.embedder))
    result = report(questions, latency)
    memories = sum(len(turns(c)) for c in conversations)
    print(f"\n{len(conversations)} conversations, {memories} memories, {len(questions)} questions;")
    print(f"embedder {args.embedder}; machine: {machine()}\n")
    cells = [
        [r["split"], r["lang"], r["system"], r["questions"], f"{r['R@5']:.3f}", f"{r['R@10']:.3f}", f"{r['MRR']:.3f}"]
        for r in result["rows"]
    ]
    print(markdown_table(["split", "lang", "system", "questions", "R@5", "R@10", "MRR"], cells))
    print()
    systems = [*ARMS, "plain BM25"]
    cells = [[k["kind"], k["questions"], *(f"{k[s]:.3f}" for s in systems)] for k in result["kinds"]]
    print(markdown_table(["kind of question (R@5)", "questions", *systems], cells))
    print()
    cells = [[name, f"{v['p50_ms']:.1f}", f"{v['p99_ms']:.1f}"] for name, v in result["latency"].items()]
    print(markdown_table(["arm", "recall p50 ms", "p99 ms"], cells))
    write_json(args.json, {"machine": machine(), "memories": memories, **result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
