"""Policy throughput and the cost of governing a retain.

1. The pure pipeline (extract, normalize + hash, secrets, quality, labels, tags, topic key, then
   dedup/conflict resolution) over the labelled candidates, on one core: items/s.
2. A governed retain vs a pass-through one: memwarden in front of the trivial upstream, once with
   ``governance.mode = "off"`` and once with ``"enforce"`` (ledger writes included), each request
   one new fact; wrk at 1 and 8 connections. Added latency = enforce - off.

Usage: python bench/policy_throughput.py [--duration 10] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.proxy_overhead import PY, free_port, machine, run_wrk, start, start_warden, stop, wait_http
from policies.pipeline import Pipeline, resolve

REPO = Path(__file__).resolve().parent.parent
UNIQUE_RETAIN = """
local n = 0
request = function()
  n = n + 1
  local body = '{"items":[{"content":"服务 svc-' .. n .. '-' .. math.random(1, 1000000000) ..
               ' 的内网端口统一设为 9000，部署在 k8s 的 search 命名空间","tags":["user:ops"]}]}'
  return wrk.format("POST", "/v1/default/banks/bench/memories", {["Content-Type"]="application/json"}, body)
end
"""


def pipeline_throughput(seconds: float) -> tuple[float, float, int]:
    """Items/s of the pure pipeline on one core, in rounds of one pass over the labelled set:
    the median round and the best one (this machine is shared; the best is what the code can do,
    the median what it did)."""
    texts = []
    for line in (REPO / "tests" / "data" / "candidates.jsonl").read_text(encoding="utf-8").splitlines():
        texts.append(json.loads(line)["text"])
    pipeline = Pipeline()
    for t in texts:  # warm the regex caches
        pipeline.judge(0, t)
    rates = []
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        begin = time.perf_counter()
        judged = [pipeline.judge(i, t, ["user:alice"]) for i, t in enumerate(texts)]
        resolve(judged, active_hashes={}, key_holders={})
        rates.append(len(texts) / (time.perf_counter() - begin))
    return statistics.median(rates), max(rates), len(texts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    duration = 2.0 if args.quick else args.duration

    rate, best, n = pipeline_throughput(min(duration, 5.0))
    print(
        f"pipeline: {rate:,.0f} items/s on one core (median round; best {best:,.0f}; {n} labelled candidates)",
        file=sys.stderr,
    )
    results: dict[str, object] = {
        "machine": machine(),
        "pipeline_items_per_s": round(rate),
        "pipeline_best_round_items_per_s": round(best),
        "retain": [],
    }

    rows = []
    if shutil.which("wrk"):
        port = free_port()
        upstream = start([PY, str(REPO / "bench" / "trivial_upstream.py"), str(port)])
        procs = [upstream]
        with tempfile.TemporaryDirectory() as tmp:
            try:
                up = f"http://127.0.0.1:{port}"
                wait_http(f"{up}/version")
                off, off_url = start_warden(up, mode="off")
                on, on_url = start_warden(up, mode="enforce")
                procs += [off, on]
                script = Path(tmp) / "retain.lua"
                script.write_text(UNIQUE_RETAIN)
                for connections in (1, 8):
                    for label, url in (("pass-through (mode off)", off_url), ("governed (enforce)", on_url)):
                        run_wrk(url, script, connections, min(2.0, duration))
                        p50, p99, rps, errors = run_wrk(url, script, connections, duration)
                        rows.append(
                            {
                                "path": label,
                                "connections": connections,
                                "p50_ms": p50,
                                "p99_ms": p99,
                                "rps": rps,
                                "errors": errors,
                            }
                        )
                        print(
                            f"  {label:<24} c={connections} p50 {p50:.2f} ms p99 {p99:.2f} ms {rps:,.0f} req/s",
                            file=sys.stderr,
                        )
            finally:
                for proc in procs:
                    stop(proc)
    else:
        print("wrk not found (apt-get install wrk): retain latency not measured", file=sys.stderr)
    results["retain"] = rows

    print(f"\nMachine: {machine()}\n")
    print(f"Policy pipeline: **{rate:,.0f} items/s** on one core, median round (best {best:,.0f}; target ≥ 20,000).\n")
    if rows:
        print("| retain, 1 new fact per request | conns | p50 ms | p99 ms | req/s | added p50 ms | added p99 ms |")
        print("|---|---|---|---|---|---|---|")
        base = {r["connections"]: r for r in rows if str(r["path"]).startswith("pass")}
        for r in rows:
            b = base[r["connections"]]
            added = "" if r is b else f"{float(r['p50_ms']) - float(b['p50_ms']):+.2f}"
            added99 = "" if r is b else f"{float(r['p99_ms']) - float(b['p99_ms']):+.2f}"
            print(
                f"| {r['path']} | {r['connections']} | {float(r['p50_ms']):.2f} | {float(r['p99_ms']):.2f} | "
                f"{float(r['rps']):,.0f} | {added} | {added99} |"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
