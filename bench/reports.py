"""The cleanup report over a bank of many active memories: how long its ledger read takes, and the
whole report (the read, then today's rules over every memory, duplicates, stale contexts).

    python -m bench.reports [--memories 20000] [--rounds 5] [--json FILE]

The bank is written through the ledger's own repository functions (every memory recorded, then
delivered: ``active``), one in twenty a repeat of an earlier one, in a temporary data directory.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import machine, markdown_table, write_json
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.deliveries import mark_delivered
from memwarden.db.memories import record_verdicts
from memwarden.db.reports import active_oldest_first
from memwarden.governance.reports import Reports
from memwarden.governance.state import build_pipeline
from memwarden.policies.judgement import Judgement
from memwarden.settings import GovernanceSettings, RetentionSettings

REGIONS = ("eu-west", "us-east", "ap-south", "sa-east")
BATCH = 500


def texts(n: int) -> list[str]:
    out = []
    for i in range(n):
        k = i - 7 if i % 20 == 19 else i  # a repeat of an earlier memory, now and then
        out.append(
            f"Service {k} of the billing platform runs on port {8000 + k % 1000} in the"
            f" {REGIONS[k % len(REGIONS)]} region; its on-call owner is team {k % 37}."
        )
    return out


def fill(ledger: Database, n: int) -> None:
    governance = GovernanceSettings()  # type: ignore[call-arg]
    pipeline = build_pipeline(governance)
    all_texts = texts(n)
    for start in range(0, n, BATCH):
        chunk = all_texts[start : start + BATCH]
        judged = pipeline.judge_many([(t, ["project:billing"]) for t in chunk])
        items = [
            {"content": t, "tags": list(j.tags), "document_id": f"doc-{start + p}"}
            for p, (t, j) in enumerate(zip(chunk, judged, strict=True))
        ]

        def write(db: Connection, judged: list[Judgement] = judged, items: list[dict[str, Any]] = items) -> None:
            recorded = record_verdicts(
                db,
                bank="bench",
                judgements=judged,
                items=items,
                request_id="bench",
                actor="bench",
                source="retain",
            )
            ids = list(recorded.memory_ids.values())
            mark_delivered(db, bank="bench", memory_ids=ids, supersede=[], request_id="bench", actor="bench")

        ledger.write_sync(write)


async def measure(ledger: Database, rounds: int) -> tuple[list[float], list[float], int, int]:
    governance = GovernanceSettings()  # type: ignore[call-arg]
    memory: Any = None  # the cleanup report reads the ledger only
    retention = RetentionSettings()  # type: ignore[call-arg]
    reports = Reports(ledger, memory, build_pipeline(governance), retention, None)
    reads, whole = [], []
    rows = candidates = 0
    for _ in range(rounds):
        start = time.perf_counter()
        rows = len(await ledger.read(lambda db: active_oldest_first(db, "bench")))
        reads.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        report = await reports.cleanup_candidates("bench")
        whole.append((time.perf_counter() - start) * 1000)
        candidates = len(report["candidates"])
    return reads, whole, rows, candidates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Database.open(Path(tmp), mirror=False)
        try:
            fill(ledger, args.memories)
            reads, whole, rows, candidates = asyncio.run(measure(ledger, args.rounds))
        finally:
            ledger.close()
    result = {
        "machine": machine(),
        "memories": rows,
        "candidates": candidates,
        "read_ms": statistics.median(reads),
        "report_ms": statistics.median(whole),
    }
    print(
        markdown_table(
            ("active memories", "candidates", "ledger read, median ms", "whole report, median ms"),
            [(rows, candidates, f"{result['read_ms']:.1f}", f"{result['report_ms']:.1f}")],
        )
    )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
