"""What the dashboard shows of a bank at a glance: the banks memwarden knows with their memories by
status, and one bank's overview — by status, topic × stage, growth per day, the last config change.
Pure reads of the counts that triggers keep as memories change (the views ``memory_counts_now`` and
``memory_days_now``: migration 0020), so their cost does not grow with the bank (an overview
scanned it before: 0.24 s at 100,000 memories); :func:`fold_counts` folds PostgreSQL's deltas in."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

from memwarden.db.common import on_postgres


def counted(db: sqlite3.Connection) -> tuple[str, str]:
    """Where the counts are read: by status × labels, by day. SQLite's triggers count in place (and
    its planner would scan the views: it does not push a bank down through their ``GROUP BY``);
    PostgreSQL's views add the deltas not folded yet."""
    if on_postgres(db):
        return "memory_counts_now", "memory_days_now"
    return "memory_counts", "memory_days"


def bank_summaries(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every bank the ledger has met (a memory recorded or a config seeded), by id, with its
    memories by status, the total and the time of its latest recorded memory."""
    banks: dict[str, dict[str, Any]] = {}

    def entry(bank: str) -> dict[str, Any]:
        return banks.setdefault(bank, {"bank_id": bank, "by_status": {}, "total": 0, "last_recorded_at": None})

    counts, _ = counted(db)
    for row in db.execute(
        f"SELECT bank, status, SUM(n) AS n FROM {counts} GROUP BY bank, status HAVING SUM(n) > 0"  # noqa: S608
    ):
        found = entry(row["bank"])
        found["by_status"][row["status"]] = row["n"]
        found["total"] += row["n"]
    for bank, found in banks.items():  # one look down the bank's index each
        latest = db.execute(
            "SELECT created_at FROM memories WHERE bank = ? ORDER BY created_at DESC LIMIT 1", (bank,)
        ).fetchone()
        found["last_recorded_at"] = latest[0] if latest else None
    for row in db.execute("SELECT bank FROM banks_seen"):
        entry(row["bank"])
    for row in db.execute("SELECT DISTINCT bank FROM config_snapshots"):
        entry(row["bank"])
    return [banks[b] for b in sorted(banks)]


def bank_overview(
    db: sqlite3.Connection, bank: str, *, statuses: list[str], days: int, at: datetime | None = None
) -> dict[str, Any]:
    """One bank at a glance: memories by status; the topic × stage matrix of the memories in
    ``statuses`` (a topic or stage never labelled is ``null``); memories recorded per day over the
    last ``days`` days (UTC) with the running total of every memory recorded; the review queue's
    size; the last config change (its snapshot's summary)."""
    counts, days_counted = counted(db)
    by_status = {
        row["status"]: row["n"]
        for row in db.execute(
            f"SELECT status, SUM(n) AS n FROM {counts} WHERE bank = ? GROUP BY status HAVING SUM(n) > 0",  # noqa: S608
            (bank,),
        )
    }
    marks = ",".join("?" * len(statuses))
    matrix = [
        {"topic": row["topic"] or None, "stage": row["stage"] or None, "count": row["n"]}
        for row in db.execute(
            f"SELECT topic, stage, SUM(n) AS n FROM {counts} WHERE bank = ? AND status IN ({marks})"  # noqa: S608
            " GROUP BY topic, stage HAVING SUM(n) > 0 ORDER BY topic, stage",
            (bank, *statuses),
        )
    ]
    now = at or datetime.now(UTC)
    first_day = (now - timedelta(days=days - 1)).date()
    start = first_day.isoformat()
    before = db.execute(
        f"SELECT COALESCE(SUM(n), 0) FROM {days_counted} WHERE bank = ? AND day < ?",  # noqa: S608
        (bank, start),
    ).fetchone()[0]
    per_day = {
        row["day"]: row["n"]
        for row in db.execute(f"SELECT day, n FROM {days_counted} WHERE bank = ? AND day >= ?", (bank, start))  # noqa: S608
    }
    growth, running = [], before
    for n in range(days):
        day = (first_day + timedelta(days=n)).isoformat()
        running += per_day.get(day, 0)
        growth.append({"day": day, "recorded": per_day.get(day, 0), "total": running})
    last = db.execute(
        "SELECT id, created_at, reason, change, outcome FROM config_snapshots WHERE bank = ?"
        " ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (bank,),
    ).fetchone()
    last_change = None
    if last is not None:
        last_change = {
            "snapshot_id": last["id"],
            "created_at": last["created_at"],
            "reason": last["reason"],
            "change": json.loads(last["change"]) if last["change"] else None,
            "outcome": last["outcome"],
        }
    return {
        "bank_id": bank,
        "total": sum(by_status.values()),
        "by_status": by_status,
        "matrix_statuses": statuses,
        "matrix": matrix,
        "growth": growth,
        "review_queue": by_status.get("review", 0),
        "last_config_change": last_change,
    }


def fold_counts(db: sqlite3.Connection) -> int:
    """PostgreSQL's count deltas (migration 0020) added into the counts and removed, in the caller's
    write transaction; how many were folded. SQLite's triggers count in place: nothing to do."""
    if not on_postgres(db):
        return 0
    row = db.execute(
        "WITH moved AS (DELETE FROM memory_deltas RETURNING bank, status, topic, stage, day, d),"
        " counted AS (INSERT INTO memory_counts (bank, status, topic, stage, n)"
        " SELECT bank, status, topic, stage, SUM(d) FROM moved GROUP BY bank, status, topic, stage"
        " ON CONFLICT (bank, status, topic, stage) DO UPDATE SET n = memory_counts.n + excluded.n),"
        " dated AS (INSERT INTO memory_days (bank, day, n) SELECT bank, day, SUM(d) FROM moved GROUP BY bank, day"
        " ON CONFLICT (bank, day) DO UPDATE SET n = memory_days.n + excluded.n)"
        " SELECT count(*) FROM moved"
    ).fetchone()
    return int(row[0])
