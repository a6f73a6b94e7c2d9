"""One request must not stall everyone (issue #33): ``/warden/health`` and a one-item retain to
another bank, timed over and over beside each hostile request, self-hosted with the defaults (the
e5 embedder and the learned layer), memwarden as a user runs it (its own process).

Targets: health < 200 ms and a small retain < 1 s beside any request within the limits; a request
past them is refused without delaying either.

Usage: python -m bench.exhaustion [--json bench/results/exhaustion.json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.harness import machine, markdown_table, write_json
from testing.loopback import free_port
from tests.servers import spawn_memwarden, wait_memwarden

WORDS = "the a service runs on nodes cluster billing deploy team prefers coffee morning review ticket closed".split()


def prose(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    while sum(len(s) + 1 for s in out) < chars:
        out.append(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + ".")
    return " ".join(out)


def cases(quick: bool) -> list[tuple[str, Callable[[], bytes]]]:
    big = 25 if quick else 49
    return [
        ("700,000 one-character items (12.6 MB)", lambda: json.dumps({"items": [{"content": "x"}] * 700_000}).encode()),
        (
            "3,000,000 tags on one item (15 MB)",
            lambda: json.dumps({"items": [{"content": "The cache has 4 shards.", "tags": ["t"] * 3_000_000}]}).encode(),
        ),
        (
            f"{big} items of 20,000 characters ({big * 20_000:,} in all, within the limits)",
            lambda: json.dumps({"items": [{"content": prose(20_000, i)} for i in range(big)]}).encode(),
        ),
        (
            "3 items of 700,000 characters (past max_request_chars)",
            lambda: json.dumps({"items": [{"content": prose(700_000, i)} for i in range(3)]}).encode(),
        ),
        ("a body past max_body_bytes (34 MB)", lambda: b'{"items": [' + b" " * 34_000_000 + b"]}"),
        ("JSON nested 100,000 deep", lambda: b"[" * 100_000 + b"]" * 100_000),
    ]


def ms(values: list[float]) -> tuple[float, float]:
    return round(statistics.median(values) * 1000, 1), round(max(values) * 1000, 1)


def run(name: str, make: Callable[[], bytes], url: str) -> dict[str, Any]:
    body = make()
    outcome: dict[str, Any] = {}

    def hostile() -> None:
        started = time.perf_counter()
        try:
            r = httpx.post(
                f"{url}/v1/default/banks/b/memories",
                content=body,
                headers={"content-type": "application/json"},
                timeout=900,
            )
            outcome["status"] = r.status_code
        except httpx.HTTPError as exc:  # a connection closed on a refused body
            outcome["status"] = type(exc).__name__
        outcome["seconds"] = time.perf_counter() - started

    health: list[float] = []
    small: list[float] = []
    thread = threading.Thread(target=hostile)
    thread.start()
    time.sleep(0.05)
    i = 0
    while thread.is_alive() or not health:
        started = time.perf_counter()
        httpx.get(f"{url}/warden/health", timeout=900)
        health.append(time.perf_counter() - started)
        started = time.perf_counter()
        fact = {"items": [{"content": f"The billing service runs on {i} nodes in eu-west-1."}]}
        r = httpx.post(f"{url}/v1/default/banks/other/memories", json=fact, timeout=900)
        assert r.status_code == 200, r.text
        small.append(time.perf_counter() - started)
        i += 1
        time.sleep(0.1)
    thread.join()
    h50, hmax = ms(health)
    s50, smax = ms(small)
    return {
        "request": name,
        "body_mb": round(len(body) / 1e6, 1),
        "status": outcome.get("status"),
        "request_s": round(outcome.get("seconds", 0.0), 1),
        "health_p50_ms": h50,
        "health_max_ms": hmax,
        "small_retain_p50_ms": s50,
        "small_retain_max_ms": smax,
        "samples": len(health),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="a 1-MB request within the limits instead of 2 MB")
    parser.add_argument("--only", default="", help="run the requests whose name holds this text")
    args = parser.parse_args()
    print(f"machine: {machine()}\n")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {"MEMWARDEN_SERVER__LOG_FORMAT": "json", "MEMWARDEN_SERVER__ACCESS_LOG": "false"}
        proc = spawn_memwarden("serve", "--port", str(port), "--data-dir", tmp, cwd=Path(tmp), env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_memwarden(url, proc)
            warm = {"items": [{"content": "The cache has 4 shards."}]}
            httpx.post(f"{url}/v1/default/banks/other/memories", json=warm, timeout=600).raise_for_status()
            for name, make in cases(args.quick):
                if args.only not in name:
                    continue
                rows.append(run(name, make, url))
                print(f"  {rows[-1]}", file=sys.stderr)
        finally:
            proc.terminate()
            proc.communicate(timeout=60)
    head = ["hostile request", "MB", "status", "its time (s)", "health p50 / max (ms)", "small retain p50 / max (ms)"]
    cells = [
        [
            r["request"],
            r["body_mb"],
            r["status"],
            r["request_s"],
            f"{r['health_p50_ms']} / {r['health_max_ms']}",
            f"{r['small_retain_p50_ms']} / {r['small_retain_max_ms']}",
        ]
        for r in rows
    ]
    print(markdown_table(head, cells))
    write_json(args.json, {"machine": machine(), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
