"""memwarden in front of Mem0 beside Mem0 alone, on the same engine in the same run.

Mem0's real ``Memory`` engine (mem0ai 2.2.1: local qdrant on disk, SQLite history) behind the
project's rig of Mem0's REST server (``testing/mem0.py``), with the offline OpenAI stand-in
(``tests/fake_openai.py``) as its embedder. One ``memwarden serve --upstream mem0+URL`` process
(default settings: the learned layer on) in front of it. The same texts
(``tests/data/labelled_items.jsonl``, held-out splits first, each labelled keep or not) are written
one request each:

* to Mem0 directly (``POST /memories``, ``infer: false``, its own user);
* through memwarden's Mem0 front, the same REST request (``POST /mem0/memories``);
* through memwarden's Hindsight front (``POST /v1/default/banks/hs/memories``), translated to Mem0.

Then the same queries are searched through each. Prints p50/p99/mean latency per operation and
path (the adds of every text, and of the facts alone: memwarden answers a rejected text without
calling Mem0, so the facts are the like-for-like rows), sequential throughput, and the governance
effect: how many of the labelled facts and noise items each path left in Mem0, counted in the
engine itself — and the same for the transcripts the Hindsight benchmarks judge
(``tests/data/transcripts.jsonl``, its eval half, never tuned on): each whole conversation retained
once, then which facts' evidence and which noise turns (longer than 12 characters) Mem0 holds.

Usage: python -m bench.mem0_backend [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.harness import REPO, machine, markdown_table, memwarden, write_json
from testing.mem0 import serve_mem0
from tests.fake_openai import serve_fake_llm

DATA = REPO / "tests" / "data" / "labelled_items.jsonl"
TRANSCRIPTS = REPO / "tests" / "data" / "transcripts.jsonl"  # the Hindsight benchmarks' (bench/filter_quality.py)
RESULTS = REPO / "bench" / "results" / "mem0_backend.json"
KEY = "bench-mem0-key"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def _timed(http: httpx.Client, path: str, body: Any, **headers: str) -> float:
    started = time.perf_counter()
    answer = http.post(path, json=body, headers=headers)
    elapsed = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    return elapsed


def _held(rig: Any, user: str) -> set[str]:
    return {m["memory"] for m in rig.memory.get_all(filters={"user_id": user}, top_k=1000)["results"]}


def _transcript_effect(path: str, conversations: list[dict[str, Any]], stored: set[str]) -> dict[str, Any]:
    """Facts whose evidence Mem0 holds, and noise turns it holds, of the conversations."""
    text = "\n".join(stored)
    facts = [f["evidence"] for c in conversations for f in c["facts"]]
    noise = [t["text"] for c in conversations for t in c["turns"] if t["label"] == "noise" and len(t["text"]) > 12]
    return {
        "path": path,
        "conversations": len(conversations),
        "facts_kept": sum(e in text for e in facts),
        "facts": len(facts),
        "noise_turns_stored": sum(n in text for n in noise),
        "noise_turns": len(noise),
    }


def run(items: list[dict[str, Any]], conversations: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [i["text"] for i in items]
    with (
        tempfile.TemporaryDirectory(prefix="bench-mem0b-") as scratch,
        serve_fake_llm() as (llm_url, _),
        serve_mem0(llm_url, api_key=KEY, directory=Path(scratch) / "mem0") as (mem0_url, rig),
    ):
        config = Path(scratch) / "memwarden.toml"
        config.write_text(
            f'backend = "mem0"\ndata_dir = "{scratch}/data"\n[backends.mem0]\nurl = "{mem0_url}"\napi_key = "{KEY}"\n'
            '[retention]\nenabled = false\n[config_guard.missions]\nmode = "off"\n'
            '[governance.banks.tx-trim]\nsegments = "trim"\n'
        )
        with (
            memwarden("--config", str(config), timeout=180) as url,
            httpx.Client(base_url=url, timeout=120) as warden,
            httpx.Client(base_url=mem0_url, timeout=120) as mem0,
        ):
            adds: dict[str, list[float]] = {"mem0 directly": [], "memwarden /mem0": [], "memwarden hindsight": []}
            for text in texts:  # the same text through each path, in turn
                message = [{"role": "user", "content": text}]
                adds["mem0 directly"].append(
                    _timed(
                        mem0,
                        "/memories",
                        {"messages": message, "user_id": "direct", "infer": False},
                        **{"x-api-key": KEY},
                    )
                )
                adds["memwarden /mem0"].append(
                    _timed(warden, "/mem0/memories", {"messages": message, "user_id": "bench", "infer": False})
                )
                adds["memwarden hindsight"].append(
                    _timed(warden, "/v1/default/banks/hs/memories", {"items": [{"content": text}]})
                )
            queries = [" ".join(t.split()[:5]) for t in texts[: max(20, len(texts) // 3)]]
            searches: dict[str, list[float]] = {k: [] for k in adds}
            for query in queries:
                searches["mem0 directly"].append(
                    _timed(mem0, "/search", {"query": query, "filters": {"user_id": "direct"}}, **{"x-api-key": KEY})
                )
                searches["memwarden /mem0"].append(
                    _timed(warden, "/mem0/search", {"query": query, "filters": {"user_id": "bench"}})
                )
                searches["memwarden hindsight"].append(
                    _timed(warden, "/v1/default/banks/hs/memories/recall", {"query": query})
                )
            for conversation in conversations:  # whole transcripts, one retain each
                text = conversation["text"]
                body = {"messages": [{"role": "user", "content": text}], "user_id": "tx-direct", "infer": False}
                _timed(mem0, "/memories", body, **{"x-api-key": KEY})
                _timed(warden, "/v1/default/banks/tx/memories", {"items": [{"content": text}]})
                _timed(warden, "/v1/default/banks/tx-trim/memories", {"items": [{"content": text}]})
            transcripts = [
                _transcript_effect(path, conversations, _held(rig, user))
                for path, user in (
                    ("mem0 directly", "tx-direct"),
                    ("memwarden hindsight", "tx"),
                    ("memwarden hindsight, segments trim", "tx-trim"),
                )
            ]
            mem0_bank = httpx.get(f"{url}/mem0/v1/ping/", timeout=30).json()["project_id"]
            held = {"mem0 directly": _held(rig, "direct"), "memwarden /mem0": _held(rig, mem0_bank)}
            held["memwarden hindsight"] = _held(rig, "hs")
    facts_at = [n for n, item in enumerate(items) if item["keep"]]
    stored = {path: [values[n] for n in facts_at] for path, values in adds.items()}
    rows = []
    for op, table in (("add, every text", adds), ("add, the facts (stored)", stored), ("search", searches)):
        for path, values in table.items():
            mean = statistics.fmean(values)
            rows.append(
                {
                    "operation": op,
                    "path": path,
                    "n": len(values),
                    "p50_ms": _pct(values, 0.5),
                    "p99_ms": _pct(values, 0.99),
                    "mean_ms": round(mean, 2),
                    "per_s": round(1000 / mean, 1),
                }
            )
    facts = {i["text"] for i in items if i["keep"]}
    noise = {i["text"] for i in items if not i["keep"]}
    effect = [
        {
            "path": path,
            "facts_kept": len(facts & stored),
            "facts": len(facts),
            "noise_stored": len(noise & stored),
            "noise": len(noise),
        }
        for path, stored in held.items()
    ]
    return {
        "machine": machine(),
        "texts": len(texts),
        "latency": rows,
        "governance": effect,
        "transcripts": transcripts,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60 texts instead of 300")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    items = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    items.sort(key=lambda i: i.get("split") == "tune")  # the held-out splits first
    facts, noise = [i for i in items if i["keep"]], [i for i in items if not i["keep"]]
    mixed = [i for pair in zip(facts, noise, strict=False) for i in pair]  # facts and noise, alternating
    items = mixed[: 60 if args.quick else 300]
    rows = [json.loads(line) for line in TRANSCRIPTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    conversations = [r for r in rows if r["split"] == "eval"][: 8 if args.quick else None]
    result = run(items, conversations)
    header = ["operation", "path", "n", "p50 ms", "p99 ms", "mean ms", "per s"]
    print(markdown_table(header, [list(r.values()) for r in result["latency"]]))
    print()
    header = ["path", "facts kept", "of facts", "noise stored", "of noise"]
    print(markdown_table(header, [list(r.values()) for r in result["governance"]]))
    print()
    header = ["path (transcripts, eval)", "conversations", "facts kept", "of facts", "noise turns stored", "of noise"]
    print(markdown_table(header, [list(r.values()) for r in result["transcripts"]]))
    print(f"\n{result['machine']}")
    write_json(args.json, result)


if __name__ == "__main__":
    sys.exit(main())
