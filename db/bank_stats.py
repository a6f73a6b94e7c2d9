"""What the dashboard shows of a bank at a glance, counted in SQL: the banks memwarden knows with
their memories by status, and one bank's overview — by status, topic × stage, growth per day, the
last config change. Pure reads, a few ``GROUP BY`` each (measured on a bank of 100,000 memories:
the banks 26 ms, an overview 0.24 s — the matrix and the growth scan the bank's rows)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any


def bank_summaries(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every bank the ledger has met (a memory recorded or a config seeded), by id, with its
    memories by status, the total and the time of its latest recorded memory."""
    banks: dict[str, dict[str, Any]] = {}

    def entry(bank: str) -> dict[str, Any]:
        return banks.setdefault(bank, {"bank_id": bank, "by_status": {}, "total": 0, "last_recorded_at": None})

    for row in db.execute(
        "SELECT bank, status, count(*) AS n, max(created_at) AS last FROM memories GROUP BY bank, status"
    ):
        found = entry(row["bank"])
        found["by_status"][row["status"]] = row["n"]
        found["total"] += row["n"]
        if found["last_recorded_at"] is None or row["last"] > found["last_recorded_at"]:
            found["last_recorded_at"] = row["last"]
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
    by_status = {
        row["status"]: row["n"]
        for row in db.execute("SELECT status, count(*) AS n FROM memories WHERE bank = ? GROUP BY status", (bank,))
    }
    marks = ",".join("?" * len(statuses))
    matrix = [
        {"topic": row["topic"], "stage": row["stage"], "count": row["n"]}
        for row in db.execute(
            f"SELECT topic, stage, count(*) AS n FROM memories WHERE bank = ? AND status IN ({marks})"  # noqa: S608
            " GROUP BY topic, stage ORDER BY topic, stage",
            (bank, *statuses),
        )
    ]
    now = at or datetime.now(UTC)
    first_day = (now - timedelta(days=days - 1)).date()
    start = datetime(first_day.year, first_day.month, first_day.day, tzinfo=UTC).isoformat()
    before = db.execute("SELECT count(*) FROM memories WHERE bank = ? AND created_at < ?", (bank, start)).fetchone()[0]
    per_day = {
        row["day"]: row["n"]
        for row in db.execute(
            "SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM memories"
            " WHERE bank = ? AND created_at >= ? GROUP BY day",
            (bank, start),
        )
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
