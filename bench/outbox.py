"""The delivery outbox's throughput: governed writes accepted into the queue while the backend is
down, and drained to it once it is back — beside, in the same run, the same writes delivered
synchronously to a healthy backend through memwarden, and straight to the backend.

Backend: the Hindsight stand-in the tests use (``testing/standin.py``: the self-hosted store's
Hindsight API, hashing embedder) in this process, behind a switch (``testing/switch.py``) that
refuses connections while "down". memwarden runs as ``memwarden serve`` in its own process,
governance ``enforce``, the rules alone (the learned layer's cost is ``bench/policy_throughput.py``'s
subject), missions off.

Each phase: ``--writers`` clients, each writing ``--requests`` retains of ``--batch`` distinct facts,
back to back, into a bank of its own (or all into one bank with ``--one-bank``: the outbox delivers
one bank's entries one at a time, in order). Reported: items/s and the median request latency;
for the drain, items/s from the switch turned on until the outbox is empty.

``--sync-only`` runs the first two phases alone (no outbox needed): what the outbox's bookkeeping
costs a healthy synchronous retain, against an earlier commit with ``bench/versus.py``.

Usage: python -m bench.outbox [--writers 8] [--requests 40] [--batch 10] [--one-bank] [--sync-only]
                              [--json FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.harness import machine, markdown_table, memwarden, write_json
from testing.standin import running_standin


def fact(phase: str, writer: int, i: int) -> str:
    return f"Service {phase}-{writer}-{i} listens on port {9000 + i % 1000} in the eu-{writer} region."


def write(base: str, phase: str, writers: int, requests: int, batch: int, one_bank: bool) -> dict[str, float]:
    """Every writer's retains; items/s over the whole phase and the median request latency (ms)."""
    latencies: list[float] = []
    lock = threading.Lock()
    failures: list[str] = []

    def writer(w: int) -> None:
        bank = f"{phase}-bank" if one_bank else f"{phase}-{w}"
        mine = []
        with httpx.Client(base_url=base, timeout=120) as client:
            for r in range(requests):
                items = [{"content": fact(phase, w, r * batch + k)} for k in range(batch)]
                started = time.perf_counter()
                answer = client.post(f"/v1/default/banks/{bank}/memories", json={"items": items})
                mine.append((time.perf_counter() - started) * 1000)
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code}: {answer.text[:200]}")
                    return
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{phase}: {failures[0]}")
    return {"items_per_s": writers * requests * batch / elapsed, "p50_ms": statistics.median(latencies)}


def drain(base: str, items: int) -> dict[str, float]:
    """From now until the outbox is empty: items/s delivered."""
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=60) as client:
        while True:
            summary = client.get("/warden/v1/outbox", params={"limit": 1}).json()["summary"]
            if summary["queued_items"] == 0:
                break
            time.sleep(0.02)
    elapsed = time.perf_counter() - started
    return {"items_per_s": items / elapsed, "seconds": elapsed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--one-bank", action="store_true")
    parser.add_argument("--sync-only", action="store_true", help="the backend up only: direct vs memwarden")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    w, n, b = args.writers, args.requests, args.batch
    env = {
        "MEMWARDEN_SERVER__ACCESS_LOG": "false",
        "MEMWARDEN_SERVER__LOG_LEVEL": "error",
        "MEMWARDEN_GOVERNANCE__MODE": "enforce",
        "MEMWARDEN_LABELS__LEARNED": "off",
        "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
    }
    if not args.sync_only:  # (keys an earlier commit does not know)
        env.update({"MEMWARDEN_OUTBOX__RETRY_INITIAL": "0.05", "MEMWARDEN_OUTBOX__RETRY_MAX": "0.5"})
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-outbox-") as tmp:
        root = Path(tmp)
        if args.sync_only:
            with (
                running_standin(root / "backend") as backend,
                memwarden("--upstream", backend.url, "--data-dir", str(root / "data"), env=env) as url,
            ):
                rows.append(
                    {"phase": "straight to the backend", **write(backend.url, "direct", w, n, b, args.one_bank)}
                )
                rows.append({"phase": "memwarden, backend up", **write(url, "up", w, n, b, args.one_bank)})
            return report(args, rows)
        from testing.switch import Switch  # a module of this commit's (not needed for --sync-only)

        with (
            running_standin(root / "backend") as backend,
            Switch(backend.url) as switch,
            memwarden("--upstream", switch.url, "--data-dir", str(root / "data"), env=env) as url,
        ):
            direct = write(backend.url, "direct", w, n, b, args.one_bank)
            rows.append({"phase": "straight to the backend (no memwarden)", **direct})
            up = write(url, "up", w, n, b, args.one_bank)
            rows.append({"phase": "memwarden, backend up: delivered synchronously", **up})
            switch.down()
            down = write(url, "down", w, n, b, args.one_bank)
            rows.append({"phase": "memwarden, backend down: queued in the outbox", **down})
            switch.up()
            drained = drain(url, w * n * b)
            rows.append({"phase": "memwarden, backend back: the outbox drained", **drained, "p50_ms": None})
    return report(args, rows)


def report(args: argparse.Namespace, rows: list[dict[str, Any]]) -> int:
    w, n, b = args.writers, args.requests, args.batch
    print(f"{w} writers × {n} requests × {b} items, {'one bank' if args.one_bank else 'a bank each'}")
    print(f"machine: {machine()}\n")
    print(
        markdown_table(
            ["phase", "items/s", "request p50 ms"],
            [
                [r["phase"], f"{r['items_per_s']:,.0f}", f"{r['p50_ms']:.1f}" if r["p50_ms"] is not None else "—"]
                for r in rows
            ],
        )
    )
    write_json(args.json, {"machine": machine(), "writers": w, "requests": n, "batch": b, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
