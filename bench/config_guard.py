"""What the config guard costs: a bank config PATCH straight to the backend vs through memwarden
(settle, snapshot with the full inventory, apply, settle, verify), by bank size.

1. The real Hindsight 1.1.0 (``scripts/hindsight-up``; fake LLM), banks of 0 and 50 memories
   (and 200 without ``--quick``), retained straight into Hindsight.
2. The Hindsight stand-in the tests use (``testing/standin.py``: the self-hosted store's Hindsight
   API on SQLite, hashing embedder, in this process), whose PATCH costs little, so that what is
   left is memwarden's own cost at 1k and 10k memories (inventory paging, snapshot storage), with
   its snapshot's size in the ledger.

Each row: the median of ``--reps`` PATCHes that change ``retain_mission``. Nothing is dropped, so
no rollback runs (the rollback's cost is the re-retain of what was lost: Hindsight's retain time).
Of the added time, the part the backend spends answering the inventory's listing (every memory
and document, in pages of 500, as the snapshot reads them) is measured straight against it too:
what is left is memwarden's own.

3. The pause a writer sees: one client writing back to back while guarded PATCHes run on its bank
   (writes wait from a change's snapshot to its verification).

Usage: python -m bench.config_guard [--quick] [--reps 7] [--no-hindsight] [--json FILE]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.harness import hindsight, machine, markdown_table, wait_settled, warden_in_front, write_json
from testing.standin import running_standin


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


def listing_ms(base: str, bank: str, reps: int, page: int = 500) -> float:
    """Listing the bank's memories and documents page by page, as the snapshot's inventory does."""
    times = []
    with httpx.Client(base_url=base, timeout=300) as http:
        for _ in range(reps):
            started = time.perf_counter()
            for what in ("memories/list", "documents"):
                offset = 0
                while True:
                    r = http.get(f"/v1/default/banks/{bank}/{what}", params={"limit": page, "offset": offset})
                    items = r.raise_for_status().json()["items"]
                    offset += len(items)
                    if len(items) < page:
                        break
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(
    backend: str, n: int, bank: str, direct_url: str, warden_url: str, data_dir: Path, reps: int
) -> dict[str, Any]:
    """One row: the same PATCHes straight to the backend, then through memwarden; the backend's
    time to list the inventory."""
    direct = patch_ms(direct_url, bank, reps)
    guarded = patch_ms(warden_url, bank, reps)
    listing = listing_ms(direct_url, bank, reps)
    print(
        f"  {backend} n={n}: direct {direct:.1f} ms, memwarden {guarded:.1f} ms, listing {listing:.1f} ms",
        file=sys.stderr,
    )
    return {
        "backend": backend,
        "memories": n,
        "direct_ms": round(direct, 1),
        "memwarden_ms": round(guarded, 1),
        "listing_ms": round(listing, 1),
        "snapshot_kb": round(snapshot_bytes(data_dir) / 1024, 1),
    }


def hindsight_rows(sizes: list[int], reps: int) -> list[dict[str, Any]]:
    rows = []
    with hindsight() as hs_url, warden_in_front(hs_url, mode="enforce") as (warden_url, data_dir):
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
    return rows


def standin_rows(sizes: list[int], reps: int) -> list[dict[str, Any]]:
    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_standin(Path(tmp)) as standin,
        warden_in_front(standin.url, mode="enforce") as (warden_url, data_dir),
        httpx.Client(base_url=standin.url, timeout=300) as http,
    ):
        for n in sizes:
            bank = f"standin-{n}"
            texts = facts(n)
            for i in range(0, n, 500):  # straight into the stand-in
                items = [{"content": t, "document_id": f"d{j}"} for j, t in enumerate(texts[i : i + 500], start=i)]
                http.post(f"/v1/default/banks/{bank}/memories", json={"items": items}).raise_for_status()
            rows.append(measure("stand-in (self-hosted store)", n, bank, standin.url, warden_url, data_dir, reps))
    return rows


def writer_pause(sizes: list[int], patches: int) -> list[dict[str, Any]]:
    """The pause a writer sees: one client retains one fact a request, back to back, into a bank
    of ``n`` memories of the stand-in while another sends ``patches`` guarded PATCHes; the write
    latencies while no change runs vs while one does (a write waits for the change's verification)."""
    import threading

    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_standin(Path(tmp)) as standin,
        warden_in_front(standin.url, mode="enforce") as (warden_url, _),
        httpx.Client(base_url=warden_url, timeout=300) as http,
    ):
        for n in sizes:
            bank = f"pause-{n}"
            texts = facts(n)
            for i in range(0, n, 500):
                http.post(
                    f"/v1/default/banks/{bank}/memories", json={"items": [{"content": t} for t in texts[i : i + 500]]}
                )
            latencies: list[tuple[float, float]] = []  # (start, seconds)
            stop = threading.Event()

            def write(
                bank: str = bank, latencies: list[tuple[float, float]] = latencies, stop: threading.Event = stop
            ) -> None:
                with httpx.Client(base_url=warden_url, timeout=300) as w:
                    k = 0
                    while not stop.is_set():
                        began = time.perf_counter()
                        r = w.post(
                            f"/v1/default/banks/{bank}/memories",
                            json={"items": [{"content": f"writer fact {k} in {bank}"}]},
                        )
                        r.raise_for_status()
                        latencies.append((began, time.perf_counter() - began))
                        k += 1

            thread = threading.Thread(target=write)
            thread.start()
            time.sleep(1.0)
            windows = []
            for p in range(patches):
                began = time.perf_counter()
                http.patch(
                    f"/v1/default/banks/{bank}/config", json={"updates": {"retain_mission": f"Keep ({p})."}}
                ).raise_for_status()
                windows.append((began, time.perf_counter()))
                time.sleep(0.5)
            stop.set()
            thread.join()
            during = [s for b, s in latencies if any(a <= b + s and b <= z for a, z in windows)]
            outside = [s for b, s in latencies if not any(a <= b + s and b <= z for a, z in windows)]
            rows.append(
                {
                    "memories": n,
                    "patches": patches,
                    "patch_ms": statistics.median((z - a) * 1000 for a, z in windows),
                    "write_p50_ms_quiet": statistics.median(outside) * 1000,
                    "write_max_ms_during_change": max(during, default=0.0) * 1000,
                    "writes_during_changes": len(during),
                }
            )
            print(f"  writer pause {rows[-1]}", file=sys.stderr)
    return rows


def cells(r: dict[str, Any]) -> list[str]:
    added = r["memwarden_ms"] - r["direct_ms"]
    own = added - r["listing_ms"]
    times = [
        f"{r['direct_ms']:.1f}",
        f"{r['memwarden_ms']:.1f}",
        f"{added:+.1f}",
        f"{r['listing_ms']:.1f}",
        f"{own:+.1f}",
    ]
    return [r["backend"], f"{r['memories']:,}", *times, f"{r['snapshot_kb']:,.1f}"]


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
    header = ["backend", "memories", "direct PATCH ms", "through memwarden ms", "added ms"]
    header += ["of which the backend listing the inventory ms", "memwarden's own ms", "snapshot KiB"]
    print(markdown_table(header, [cells(r) for r in rows]))
    pauses = writer_pause([1000] if args.quick else [1000, 10000], 3 if args.quick else 5)
    print(
        "\n"
        + markdown_table(
            [
                "memories",
                "guarded PATCH ms (median)",
                "write p50 ms, no change running",
                "longest write during a change ms",
            ],
            [
                [
                    f"{p['memories']:,}",
                    f"{p['patch_ms']:.0f}",
                    f"{p['write_p50_ms_quiet']:.1f}",
                    f"{p['write_max_ms_during_change']:.0f}",
                ]
                for p in pauses
            ],
        )
    )
    write_json(args.json, {"machine": machine(), "rows": rows, "writer_pause": pauses})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
