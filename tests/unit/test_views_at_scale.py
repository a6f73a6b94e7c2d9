"""The operator's views at scale (#37), on both engines: a bank's counts kept true by triggers
through every kind of change (so the overview and a listing's total need no scan), a listing paged
by cursor that visits every memory once in the order OFFSET gives, and migration 0020 counting the
memories a ledger already had."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memwarden.db import memories, memory_reads, snapshots
from memwarden.db.bank_stats import bank_overview, bank_summaries, fold_counts
from memwarden.db.database import Database
from memwarden.db.migrations import LEDGER_MIGRATIONS, migrate
from memwarden.db.sqlite import connect as sqlite_connect
from tests.unit.test_db_repositories import add_memory, snapshot

pytestmark = pytest.mark.usefixtures("engine")

STATUSES = ("active", "review", "rejected", "archived", "superseded", "erased")
TOPICS = (None, "infra", "code", "people")
STAGES = (None, "decision", "reference")


@pytest.fixture
def ledger(tmp_path: Path, engine: str | None) -> Iterator[Database]:
    database = Database.open(tmp_path, mirror=False, url=engine)
    yield database
    database.close()


def recount(db: sqlite3.Connection) -> dict[tuple[str, str, str | None, str | None], int]:
    """What the counts must say: the memories grouped, the way the overview scanned them before."""
    rows = db.execute("SELECT bank, status, topic, stage FROM memories").fetchall()
    return dict(Counter((r[0], r[1], r[2], r[3]) for r in rows))


def kept(db: sqlite3.Connection) -> dict[tuple[str, str, str | None, str | None], int]:
    rows = db.execute("SELECT bank, status, topic, stage, n FROM memory_counts_now WHERE n > 0").fetchall()
    return {(r[0], r[1], r[2] or None, r[3] or None): int(r[4]) for r in rows}


def days_recount(db: sqlite3.Connection) -> dict[tuple[str, str], int]:
    rows = db.execute("SELECT bank, created_at FROM memories").fetchall()
    return dict(Counter((r[0], r[1][:10]) for r in rows))


def days_kept(db: sqlite3.Connection) -> dict[tuple[str, str], int]:
    rows = db.execute("SELECT bank, day, n FROM memory_days_now WHERE n > 0").fetchall()
    return {(r[0], r[1]): int(r[2]) for r in rows}


def test_counts_follow_every_kind_of_change_to_the_memories(ledger: Database) -> None:
    rng = random.Random(37)

    def burst(db: sqlite3.Connection) -> None:
        for i in range(300):
            add_memory(
                db,
                f"m{i}",
                bank=rng.choice(("a", "b")),
                status=rng.choice(STATUSES),
                stage=rng.choice(STAGES),
                created_at=f"2026-0{rng.randint(1, 3)}-{rng.randint(10, 28)}T{rng.randint(10, 23)}:00:00+00:00",
            )
        for i in range(0, 300, 3):  # labels given and changed
            db.execute("UPDATE memories SET topic = ? WHERE id = ?", (rng.choice(TOPICS), f"m{i}"))
        for i in range(1, 300, 5):  # statuses changed by the repositories, as a review or an archive does
            row = db.execute("SELECT bank, status FROM memories WHERE id = ?", (f"m{i}",)).fetchone()
            memories.transition(db, row[0], f"m{i}", memories.Change(row[1], "archived", "archive", "api", None))
        for i in range(2, 300, 7):  # moved to another day, another bank, deleted
            db.execute("UPDATE memories SET created_at = '2026-04-01T00:00:00+00:00' WHERE id = ?", (f"m{i}",))
        db.execute("UPDATE memories SET bank = 'c' WHERE id IN ('m4', 'm8')")
        db.execute("DELETE FROM memories WHERE id IN ('m10', 'm20', 'm30')")
        db.execute("UPDATE memories SET hit_count = hit_count + 1")  # a change the counts do not see

    ledger.write_sync(burst)
    assert ledger.read_sync(kept) == ledger.read_sync(recount)
    assert ledger.read_sync(days_kept) == ledger.read_sync(days_recount)
    assert sum(ledger.read_sync(kept).values()) == 297
    # PostgreSQL's deltas folded into the counts: the same counts, no delta left (SQLite has none).
    folded = ledger.write_sync(fold_counts)
    assert (folded > 0) == (ledger.engine == "postgresql")
    assert ledger.read_sync(lambda db: db.execute("SELECT count(*) FROM memory_deltas").fetchone()[0]) == 0
    assert ledger.read_sync(kept) == ledger.read_sync(recount)
    assert ledger.read_sync(days_kept) == ledger.read_sync(days_recount)
    ledger.write_sync(lambda db: db.execute("UPDATE memories SET status = 'archived' WHERE bank = 'a'"))
    assert ledger.read_sync(kept) == ledger.read_sync(recount)  # folded counts and new deltas, added


def test_the_overview_and_the_bank_list_read_the_counts_as_a_scan_would(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        for i in range(40):
            add_memory(
                db,
                f"m{i}",
                status=STATUSES[i % 3],
                stage=STAGES[i % 3],
                created_at=f"2026-03-{1 + i % 20:02d}T12:00:00+00:00",
            )
            db.execute("UPDATE memories SET topic = ? WHERE id = ?", (TOPICS[i % 4], f"m{i}"))
        add_memory(db, "other", bank="z", created_at="2026-03-05T00:00:00+00:00")

    ledger.write_sync(fill)
    at = datetime(2026, 3, 20, 18, tzinfo=UTC)
    view = ledger.read_sync(lambda db: bank_overview(db, "b", statuses=["active", "review"], days=10, at=at))
    rows = ledger.read_sync(
        lambda db: db.execute("SELECT status, topic, stage, created_at FROM memories WHERE bank = 'b'").fetchall()
    )
    assert view["by_status"] == dict(Counter(r[0] for r in rows))
    assert view["total"] == 40
    matrix = Counter((r[1], r[2]) for r in rows if r[0] in ("active", "review"))
    assert {(m["topic"], m["stage"]): m["count"] for m in view["matrix"]} == dict(matrix)
    assert all(m["count"] > 0 for m in view["matrix"])
    per_day = Counter(r[3][:10] for r in rows)
    assert [g["recorded"] for g in view["growth"]] == [per_day.get(f"2026-03-{d:02d}", 0) for d in range(11, 21)]
    assert view["growth"][-1]["total"] == 40
    assert view["growth"][0]["total"] == sum(n for day, n in per_day.items() if day <= "2026-03-11")
    listed = {b["bank_id"]: b for b in ledger.read_sync(bank_summaries)}
    assert listed["b"]["total"] == 40
    assert listed["b"]["last_recorded_at"] == max(r[3] for r in rows)
    assert listed["z"]["by_status"] == {"active": 1}


def page_all(ledger: Database, query: memory_reads.LedgerQuery) -> tuple[list[str], list[dict[str, Any]]]:
    seen: list[str] = []
    pages = []
    cursor = None
    while True:
        after = memory_reads.read_cursor(cursor) if cursor else None
        q = memory_reads.LedgerQuery(**{**query.__dict__, "after": after})
        page = ledger.read_sync(lambda db, q=q: memory_reads.list_memories(db, "b", q))
        pages.append(page)
        seen += [m["id"] for m in page["items"]]
        cursor = page["next"]
        if cursor is None:
            return seen, pages


def test_a_listing_paged_by_cursor_visits_every_memory_once_in_offsets_order(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        for i in range(95):  # many on the same instant: the id breaks the tie
            add_memory(db, f"m{i:03d}", status=STATUSES[i % 2], created_at=f"2026-01-0{1 + i % 4}T00:00:00+00:00")
        add_memory(db, "elsewhere", bank="c")

    ledger.write_sync(fill)
    for statuses in ((), ("active",), ("active", "review")):
        query = memory_reads.LedgerQuery(statuses=statuses, limit=10)
        seen, pages = page_all(ledger, query)
        by_offset: list[str] = []
        for offset in range(0, 100, 10):
            q = memory_reads.LedgerQuery(statuses=statuses, limit=10, offset=offset)
            by_offset += [
                m["id"] for m in ledger.read_sync(lambda db, q=q: memory_reads.list_memories(db, "b", q))["items"]
            ]
        expected = 95 if not statuses or len(statuses) == 2 else 48
        assert len(seen) == len(set(seen)) == expected
        assert seen == by_offset
        assert {p["total"] for p in pages} == {expected}  # from the counts, the same on every page
        created = [
            ledger.read_sync(
                lambda db, m=m: db.execute("SELECT created_at FROM memories WHERE id = ?", (m,)).fetchone()[0]
            )
            for m in seen
        ]
        assert created == sorted(created, reverse=True)
    # With a text filter the total is counted, and the cursor pages it too.
    seen, pages = page_all(ledger, memory_reads.LedgerQuery(q="of m01", limit=3))
    assert sorted(seen) == [f"m{i:03d}" for i in range(10, 20)]
    assert pages[0]["total"] == 10


@pytest.mark.parametrize("bad", ["", "x", "W10", "WyJhIl0", "eyJhIjogMX0", "WzEsIDJd", "!!!"])
def test_a_cursor_the_listing_did_not_give_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a cursor"):
        memory_reads.read_cursor(bad)


def test_a_list_of_snapshots_reads_no_inventory(ledger: Database) -> None:
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("s1")))
    # An inventory that cannot be read: the list does not read it.
    ledger.write_sync(lambda db: db.execute("UPDATE config_snapshots SET inventory = 'not json' WHERE id = 's1'"))
    (summary,) = ledger.read_sync(lambda db: snapshots.snapshot_summaries(db, "b"))
    assert (summary["memories"], summary["documents"]) == (1, 0)


def test_migration_0020_counts_the_memories_and_sizes_the_snapshots_a_ledger_already_had(
    tmp_path: Path, engine: str | None
) -> None:
    if engine is None:
        db: Any = sqlite_connect(tmp_path / "memwarden.db")
    else:
        from memwarden.db import postgres

        db = postgres.connect(engine)
        db.execute("BEGIN IMMEDIATE")
        db.create_functions()
        db.execute("COMMIT")
    try:
        before = [m for m in LEDGER_MIGRATIONS if m[0] != "0020_views_at_scale"]
        migrate(db, before)
        db.execute("BEGIN IMMEDIATE")
        for i in range(30):
            add_memory(
                db,
                f"m{i}",
                bank="ab"[i % 2],
                status=STATUSES[i % 3],
                created_at=f"2026-02-{1 + i % 9:02d}T01:00:00+00:00",
            )
        snap = snapshot("s1")
        db.execute(
            "INSERT INTO config_snapshots (id, bank, created_at, reason, settled, config, overrides, stats, counts,"
            " inventory, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                "s1",
                "b",
                snap.created_at,
                "r",
                1,
                "{}",
                "{}",
                "{}",
                "{}",
                json.dumps({"memories": [{}, {}, {}], "documents": [{}]}),
                snap.created_at,
            ),
        )
        db.execute("COMMIT")
        assert migrate(db, LEDGER_MIGRATIONS) == ["0020_views_at_scale"]
        assert kept(db) == recount(db)
        assert days_kept(db) == days_recount(db)
        assert snapshots.snapshot_summaries(db, "b")[0]["memories"] == 3
        db.execute("BEGIN IMMEDIATE")
        add_memory(db, "later", bank="a")  # and counted from then on
        db.execute("COMMIT")
        assert kept(db) == recount(db)
    finally:
        db.close()
