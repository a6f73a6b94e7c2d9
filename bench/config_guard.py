"""What the config guard costs: a bank config PATCH straight to the backend vs through memwarden
(settle, snapshot with the full inventory, apply, settle, verify), by bank size.

1. The real Hindsight 1.1.0 (``scripts/hindsight-up``; fake LLM), banks of 0 and 50 memories
   (and 200 without ``--quick``), retained straight into Hindsight.
2. The stateful stand-in of the tests (``tests/mini_hindsight.py``), which answers from memory, so
   that what is left is memwarden's own cost at 1k and 10k memories (inventory paging, snapshot
   storage), with its snapshot's size in the ledger.

Each row: the median of ``--reps`` PATCHes that change ``retain_mission``. Nothing is dropped, so
no rollback runs (the rollback's cost is the re-retain of what was lost: Hindsight's retain time).

Usage: python bench/config_guard.py [--quick] [--reps 7] [--no-hindsight] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.proxy_overhead import machine, start_warden_in, stop
from tests.mini_hindsight import MiniHindsight
from tests.servers import serve_in_thread

REPO = Path(__file__).resolve().parent.parent


def facts(n: int) -> list[str]:
    return [f"服务 svc-{i} 的内网端口统一设为 {9000 + i}，部署在 search 命名空间" for i in range(n)]


def patch_ms(base: str, bank: str, reps: int) -> float:
    times = []
    with httpx.Client(base_url=base, timeout=300) as http:
        for i in range(reps):
            started = time.perf_counter()
            r = http.patch(f"/v1/default/banks/{bank}/config", json={"updates": {"retain_mission": f"m{i}"}})
            times.append((time.perf_counter() - started) * 1000)
            if r.status_code != 200:
                raise RuntimeError(f"PATCH through {base} answered {r.status_code}: {r.text[:300]}")
    return statistics.median(times)


def snapshot_bytes(data_dir: Path) -> int:
    db = sqlite3.connect(data_dir / "memwarden.db")
    try:
        row = db.execute(
            "SELECT LENGTH(inventory) + LENGTH(config) + LENGTH(stats) FROM config_snapshots"
            " ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
    finally:
        db.close()
    return int(row[0]) if row else 0


def measure(
    backend: str, n: int, bank: str, direct_url: str, warden_url: str, data_dir: Path, reps: int
) -> dict[str, Any]:
    """One row: the same PATCHes straight to the backend, then through memwarden."""
    direct = patch_ms(direct_url, bank, reps)
    guarded = patch_ms(warden_url, bank, reps)
    print(f"  {backend} n={n}: direct {direct:.1f} ms, memwarden {guarded:.1f} ms", file=sys.stderr)
    return {
        "backend": backend,
        "memories": n,
        "direct_ms": round(direct, 1),
        "memwarden_ms": round(guarded, 1),
        "snapshot_kb": round(snapshot_bytes(data_dir) / 1024, 1),
    }


def wait_settled(http: httpx.Client, bank: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        stats = http.get(f"/v1/default/banks/{bank}/stats", params={"refresh": "true"}).json()
        if not stats.get("pending_operations") and not stats.get("pending_consolidation"):
            return
        time.sleep(0.5)


def hindsight_rows(sizes: list[int], reps: int) -> list[dict[str, Any]]:
    hs_url = (
        subprocess.run([str(REPO / "scripts" / "hindsight-up")], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    proc, warden_url, data_dir = start_warden_in(hs_url, "aiohttp", mode="enforce")
    rows = []
    try:
        for n in sizes:
            bank = f"bench-config-{n}-{int(time.time())}"
            with httpx.Client(base_url=hs_url, timeout=300) as http:
                http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
                texts = facts(n)
                for i in range(0, n, 50):
                    items = [{"content": t} for t in texts[i : i + 50]]
                    http.post(f"/v1/default/banks/{bank}/memories", json={"items": items}).raise_for_status()
                wait_settled(http, bank)
            rows.append(measure("Hindsight 1.1.0", n, bank, hs_url, warden_url, data_dir, reps))
    finally:
        stop(proc)
    return rows


def standin_rows(sizes: list[int], reps: int) -> list[dict[str, Any]]:
    rows = []
    mini = MiniHindsight()
    with serve_in_thread(mini.app()) as up:
        proc, warden_url, data_dir = start_warden_in(up, "aiohttp", mode="enforce")
        try:
            for n in sizes:
                bank = f"standin-{n}"
                mini.retain(bank, [{"content": t, "document_id": f"d{i}"} for i, t in enumerate(facts(n))], False)
                rows.append(measure("stand-in (in memory)", n, bank, up, warden_url, data_dir, reps))
        finally:
            stop(proc)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--no-hindsight", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    reps = 3 if args.quick else args.reps
    rows = []
    if not args.no_hindsight:
        rows += hindsight_rows([0, 50] if args.quick else [0, 50, 200], reps)
    rows += standin_rows([1000] if args.quick else [1000, 10000], reps)

    print(f"\nMachine: {machine()}; median of {reps} PATCHes of retain_mission per row.\n")
    print("| backend | memories | direct PATCH ms | through memwarden ms | added ms | snapshot KiB |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        added = r["memwarden_ms"] - r["direct_ms"]
        print(
            f"| {r['backend']} | {r['memories']:,} | {r['direct_ms']:.1f} | {r['memwarden_ms']:.1f} | {added:+.1f} |"
            f" {r['snapshot_kb']:,.1f} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
