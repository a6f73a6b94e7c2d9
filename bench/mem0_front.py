"""The Mem0 front beside the Hindsight front, on the same self-hosted store.

One ``memwarden serve`` process (self-hosted, its own data folder); the same texts
(``tests/data/labelled_items.jsonl``) written one request each through both fronts — a Mem0 add
(``POST /mem0/v3/memories/add/``, ``infer: false``, ``user_id``) into the Mem0 bank, a Hindsight
retain (``POST /v1/default/banks/hs/memories``, the tag ``user:bench``) into another bank — then the
same queries searched through both (a Mem0 search filtered on the user, a Hindsight recall with the
tag). Prints p50/p99 latency per operation and front, and how many texts got the same governance
verdict through either front (the Mem0 event's decisions against the retain's ``warden`` object).

Usage: python -m bench.mem0_front [--quick] [--embedder hashing|e5] [--json FILE]
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

DATA = REPO / "tests" / "data" / "labelled_items.jsonl"
RESULTS = REPO / "bench" / "results" / "mem0_front.json"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def _timed(http: httpx.Client, method: str, path: str, body: Any) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    answer = http.request(method, path, json=body)
    elapsed = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    return elapsed, answer


def run(texts: list[str], embedder: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-mem0-") as scratch:
        config = Path(scratch) / "memwarden.toml"
        config.write_text(
            f'data_dir = "{scratch}/data"\n[local]\nembedder = "{embedder}"\n[retention]\nenabled = false\n'
            '[config_guard.missions]\nmode = "off"\n'
        )
        with memwarden("--config", str(config), timeout=120) as url, httpx.Client(base_url=url, timeout=120) as http:
            adds: dict[str, list[float]] = {"mem0": [], "hindsight": []}
            agree, verdicts = 0, []
            for text in texts:
                ms, answer = _timed(
                    http,
                    "POST",
                    "/mem0/v3/memories/add/",
                    {"messages": [{"role": "user", "content": text}], "user_id": "bench", "infer": False},
                )
                adds["mem0"].append(ms)
                event = http.get(f"/mem0/v1/event/{answer.json()['event_id']}/").json()
                mem0_verdict = event["warden"]["decisions"][0]["verdict"]
                ms, answer = _timed(
                    http,
                    "POST",
                    "/v1/default/banks/hs/memories?warden=verbose",
                    {"items": [{"content": text, "tags": ["user:bench"]}]},
                )
                adds["hindsight"].append(ms)
                hs_verdict = answer.json()["warden"]["decisions"][0]["verdict"]
                agree += mem0_verdict == hs_verdict
                verdicts.append(mem0_verdict)
            queries = [" ".join(t.split()[:4]) for t in texts[: max(20, len(texts) // 3)]]
            searches: dict[str, list[float]] = {"mem0": [], "hindsight": []}
            for query in queries:
                ms, _ = _timed(
                    http, "POST", "/mem0/v3/memories/search/", {"query": query, "filters": {"user_id": "bench"}}
                )
                searches["mem0"].append(ms)
                ms, _ = _timed(
                    http,
                    "POST",
                    "/v1/default/banks/hs/memories/recall",
                    {"query": query, "tags": ["user:bench"], "tags_match": "any_strict"},
                )
                searches["hindsight"].append(ms)
    rows = []
    for op, table in (("add", adds), ("search", searches)):
        for front, values in table.items():
            rows.append(
                {
                    "operation": op,
                    "front": front,
                    "n": len(values),
                    "p50_ms": _pct(values, 0.5),
                    "p99_ms": _pct(values, 0.99),
                    "mean_ms": round(statistics.fmean(values), 2),
                }
            )
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    return {
        "machine": machine(),
        "embedder": embedder,
        "texts": len(texts),
        "latency": rows,
        "verdicts_agree": agree,
        "verdicts_mem0": counts,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60 texts instead of 300")
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "e5"])
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    texts = [json.loads(line)["text"] for line in DATA.read_text().splitlines() if line.strip()]
    texts = texts[: 60 if args.quick else 300]
    result = run(texts, args.embedder)
    header = ["operation", "front", "n", "p50 ms", "p99 ms", "mean ms"]
    print(markdown_table(header, [list(r.values()) for r in result["latency"]]))
    print(
        f"\nsame verdict through both fronts: {result['verdicts_agree']}/{result['texts']}  {result['verdicts_mem0']}"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    sys.exit(main())
