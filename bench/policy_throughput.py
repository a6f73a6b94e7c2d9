"""Policy throughput and the cost of governing a retain.

1. The pure pipeline (extract, normalize + hash, secrets, quality, labels, tags, topic key,
   instructions aimed at the agent, then dedup/conflict resolution) over the labelled candidates,
   on one core: items/s; and, in rounds interleaved with it, the same pipeline without the
   injection detector: what the detector costs an item.
2. A governed retain vs a pass-through one: memwarden in front of the trivial upstream, once with
   ``governance.mode = "off"`` and once with ``"enforce"`` (ledger writes included), each request
   one new fact; wrk at 1 and 8 connections. Added latency = enforce - off. The same for a recall
   whose tag filter is rewritten and whose results are checked against the ledger.

3. The learned layer's price beside the rules alone: items/s and latency for short items and for
   the transcript set's 30+-turn conversations.

Usage: python -m bench.policy_throughput [--duration 10] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import DATA, machine, markdown_table, run_wrk, trivial_upstream, warden_in_front, write_json
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.resolve import resolve

UNIQUE_RETAIN = """
local n = 0
request = function()
  n = n + 1
  local body = '{"items":[{"content":"服务 svc-' .. n .. '-' .. math.random(1, 1000000000) ..
               ' 的内网端口统一设为 9000，部署在 k8s 的 search 命名空间","tags":["user:ops"]}]}'
  return wrk.format("POST", "/v1/default/banks/bench/memories", {["Content-Type"]="application/json"}, body)
end
"""
# A recall with a tag filter to rewrite (all_strict over two key:value tags) whose results carry
# document ids, so the status check reads the ledger.
TAGGED_RECALL = """
request = function()
  local body = '{"query":"what coffee does alice like","tags":["user:alice","topic:food"],"tags_match":"all_strict"}'
  return wrk.format("POST", "/v1/default/banks/bench/memories/recall", {["Content-Type"]="application/json"}, body)
end
"""


def reference_seconds() -> float:
    """A fixed slice of pure-Python work (~2 ms at full speed). This machine is a VM whose core
    speed varies up to 2x with the host's load; timing this slice next to each round says how
    fast the core was running during it."""
    begin = time.perf_counter()
    total = 0
    for i in range(100_000):
        total += i
    return time.perf_counter() - begin


def pipeline_throughput(seconds: float) -> dict[str, float]:
    """Items/s of the pure pipeline on one core, in rounds of one pass over the labelled set.

    Reported: the median round, the best round, and the median round *at the core's full speed*:
    each round's rate scaled by how much slower the reference slice ran around it than its
    fastest run in this process (a round on a core throttled to half speed counts double). The
    raw median says what this shared machine did; the calibrated one what the code does on one
    unshared core."""
    texts = []
    for line in (DATA / "candidates.jsonl").read_text(encoding="utf-8").splitlines():
        texts.append(json.loads(line)["text"])
    pipeline, without = Pipeline(), Pipeline(injection=False)
    for t in texts:  # warm the regex caches
        pipeline.judge(0, t)
        without.judge(0, t)
    rounds: list[tuple[float, float]] = []
    bare: list[float] = []  # the same rounds without the injection detector, interleaved
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        before = reference_seconds()
        begin = time.perf_counter()
        judged = [pipeline.judge(i, t, ["user:alice"]) for i, t in enumerate(texts)]
        resolve(judged, active_hashes={}, key_holders={})
        elapsed = time.perf_counter() - begin
        after = reference_seconds()
        rounds.append((len(texts) / elapsed, (before + after) / 2))
        begin = time.perf_counter()
        resolve([without.judge(i, t, ["user:alice"]) for i, t in enumerate(texts)], active_hashes={}, key_holders={})
        bare.append(len(texts) / (time.perf_counter() - begin))
    fastest = min(ref for _, ref in rounds)
    rates = [rate for rate, _ in rounds]
    return {
        "median": statistics.median(rates),
        "best": max(rates),
        "calibrated": statistics.median(rate * ref / fastest for rate, ref in rounds),
        "slowdown": statistics.median(ref / fastest for _, ref in rounds),
        "items": len(texts),
        "rounds": len(rounds),
        "without_injection": statistics.median(bare),
        # µs an item the detector adds: the medians' difference of the time per item
        "injection_us": (1 / statistics.median(rates) - 1 / statistics.median(bare)) * 1e6,
    }


def learned_cost(seconds: float) -> list[dict[str, object]]:
    """The learned layer's price, beside the rules alone: items/s and latency per item for the
    labelled candidates (one short item a call, as a retain of one fact judges it), and latency per
    conversation for the transcript set's 30+-turn conversations (one item each)."""
    from memwarden.governance.state import build_pipeline
    from memwarden.settings import GovernanceSettings, LabelsSettings
    from memwarden.store.embedder import E5Embedder

    short = [json.loads(line)["text"] for line in (DATA / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    talks = [json.loads(line) for line in (DATA / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()]
    long_talks = [t["text"] for t in talks if len(t["turns"]) >= 30]
    pipelines = {
        "rules": build_pipeline(GovernanceSettings(), LabelsSettings(learned="off")),
        "rules + learned (e5)": build_pipeline(GovernanceSettings(), LabelsSettings(), E5Embedder()),
    }
    rows: list[dict[str, object]] = []
    for name, pipeline in pipelines.items():
        for kind, texts in (("short item", short), (f"{len(long_talks[0].splitlines())}-line transcript", long_talks)):
            for t in texts[:20]:  # warm up
                pipeline.judge(0, t)
            times: list[float] = []
            started = time.perf_counter()
            while time.perf_counter() - started < seconds:
                for t in texts:
                    begin = time.perf_counter()
                    pipeline.judge(0, t)
                    times.append(time.perf_counter() - begin)
            rows.append(
                {
                    "pipeline": name,
                    "input": "short item" if kind == "short item" else "30+-turn transcript",
                    "items_per_s": round(len(times) / sum(times)),
                    "p50_ms": round(statistics.median(times) * 1000, 3),
                    "p99_ms": round(sorted(times)[int(len(times) * 0.99)] * 1000, 3),
                    "judged": len(times),
                }
            )
            print(f"  learned cost {rows[-1]}", file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    duration = 2.0 if args.quick else args.duration

    p = pipeline_throughput(min(duration, 5.0))
    rate, best, calibrated = p["median"], p["best"], p["calibrated"]
    print(
        f"pipeline: {rate:,.0f} items/s on one core (median round; best {best:,.0f}; "
        f"{calibrated:,.0f} at the core's full speed, median slowdown {p['slowdown']:.2f}x; "
        f"{p['items']:.0f} labelled candidates, {p['rounds']:.0f} rounds); without the injection detector"
        f" {p['without_injection']:,.0f} items/s: it costs {p['injection_us']:.1f} µs an item",
        file=sys.stderr,
    )
    results: dict[str, object] = {
        "machine": machine(),
        "pipeline_items_per_s": round(rate),
        "pipeline_best_round_items_per_s": round(best),
        "pipeline_full_speed_items_per_s": round(calibrated),
        "median_core_slowdown": round(p["slowdown"], 2),
        "pipeline_without_injection_items_per_s": round(p["without_injection"]),
        "injection_us_per_item": round(p["injection_us"], 1),
        "retain": [],
    }
    learned = learned_cost(min(duration, 5.0))
    results["learned"] = learned
    print(
        "\n"
        + markdown_table(
            ["pipeline", "input", "items/s (one core)", "p50 ms", "p99 ms", "judged"],
            [
                [r["pipeline"], r["input"], f"{r['items_per_s']:,}", r["p50_ms"], r["p99_ms"], r["judged"]]
                for r in learned
            ],
        )
        + "\n"
    )

    rows = []
    if shutil.which("wrk"):
        with (
            tempfile.TemporaryDirectory() as tmp,
            trivial_upstream() as up,
            warden_in_front(up, mode="off") as (off_url, _),
            warden_in_front(up, mode="enforce") as (on_url, _),
        ):
            scripts = {"retain": Path(tmp) / "retain.lua", "recall": Path(tmp) / "recall.lua"}
            scripts["retain"].write_text(UNIQUE_RETAIN)
            scripts["recall"].write_text(TAGGED_RECALL)
            for (kind, script), connections in itertools.product(scripts.items(), (1, 8)):
                for label, url in (("pass-through (mode off)", off_url), ("governed (enforce)", on_url)):
                    run_wrk(url, script, connections, min(2.0, duration))
                    p50, p99, rps, errors = run_wrk(url, script, connections, duration)
                    rows.append(
                        {
                            "request": kind,
                            "path": label,
                            "connections": connections,
                            "p50_ms": p50,
                            "p99_ms": p99,
                            "rps": rps,
                            "errors": errors,
                        }
                    )
                    print(
                        f"  {kind:<6} {label:<24} c={connections} p50 {p50:.2f} ms p99 {p99:.2f} ms {rps:,.0f} req/s",
                        file=sys.stderr,
                    )
    else:
        print("wrk not found (apt-get install wrk): retain latency not measured", file=sys.stderr)
    results["retain"] = rows

    print(f"\nMachine: {machine()}\n")
    print(
        f"Policy pipeline, one core: **{calibrated:,.0f} items/s** at the core's full speed (target ≥ 20,000); "
        f"raw median round {rate:,.0f} with the core running {p['slowdown']:.2f}x slower than its best; "
        f"best round {best:,.0f}.\n"
    )
    if rows:
        base = {(r["request"], r["connections"]): r for r in rows if str(r["path"]).startswith("pass")}
        what = {"retain": "retain, 1 new fact", "recall": "recall, 2-tag all_strict filter"}
        cells = []
        for r in rows:
            b = base[(r["request"], r["connections"])]
            added = "" if r is b else f"{float(r['p50_ms']) - float(b['p50_ms']):+.2f}"
            added99 = "" if r is b else f"{float(r['p99_ms']) - float(b['p99_ms']):+.2f}"
            numbers = [f"{float(r['p50_ms']):.2f}", f"{float(r['p99_ms']):.2f}", f"{float(r['rps']):,.0f}"]
            cells.append([what[str(r["request"])], r["path"], r["connections"], *numbers, added, added99])
        header = ["request", "path", "conns", "p50 ms", "p99 ms", "req/s", "added p50 ms", "added p99 ms"]
        print(markdown_table(header, cells))
    write_json(args.json, results)
    return 0 if all(not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
