"""Retention's read of the ``memories`` table: the active memories whose stage's period has passed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

PeriodFor = Callable[[str | None, str | None], int | None]


def _parse(ts: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def due_for_retention(
    db: sqlite3.Connection, period_for: PeriodFor, *, bank: str | None, at: datetime
) -> list[dict[str, Any]]:
    """The active memories whose period has passed at ``at``, oldest first. ``period_for(topic,
    stage)`` is the days a memory lives (None: forever); its age counts from its event time."""
    where, args = "status = 'active'", []
    if bank is not None:
        where += " AND bank = ?"
        args.append(bank)
    out = []
    for row in db.execute(
        f"SELECT id, bank, content, topic, stage, COALESCE(event_time, created_at) AS born FROM memories WHERE {where}",  # noqa: S608
        args,
    ):
        days = period_for(row["topic"], row["stage"])
        born = _parse(row["born"] or "")
        if days is None or born is None:
            continue
        age = at - born
        if age > timedelta(days=days):
            out.append(
                {
                    "id": row["id"],
                    "bank": row["bank"],
                    "topic": row["topic"],
                    "stage": row["stage"],
                    "content": row["content"],
                    "event_time": row["born"],
                    "age_days": round(age.total_seconds() / 86400, 1),
                    "period_days": days,
                }
            )
    out.sort(key=lambda m: str(m["event_time"]))
    return out


DELETIONS = ("delete_bank", "delete_memories", "delete_document", "config_delete")
# A deletion that can still be undone: applied (a config reset verified: kept), or a restore that
# stopped half-way.
OPEN = ("applied", "kept", "rollback_incomplete", "unverified")


def deletions_past(db: sqlite3.Connection, cutoff: str, *, bank: str | None) -> list[tuple[str, str]]:
    """(snapshot id, bank) of each deletion snapshot taken before ``cutoff`` and still open."""
    where = f"reason IN ({','.join('?' * len(DELETIONS))}) AND created_at < ?"
    where += f" AND COALESCE(outcome, 'applied') IN ({','.join('?' * len(OPEN))})"
    args: list[Any] = [*DELETIONS, cutoff, *OPEN]
    if bank is not None:
        where += " AND bank = ?"
        args.append(bank)
    sql = f"SELECT id, bank FROM config_snapshots WHERE {where} ORDER BY created_at"  # noqa: S608
    return [(r["id"], r["bank"]) for r in db.execute(sql, args)]


def still_open(db: sqlite3.Connection, snapshot_id: str) -> bool:
    """Whether the deletion can still be undone (not restored, not expired, meanwhile)."""
    row = db.execute(
        "SELECT COALESCE(outcome, 'applied') FROM config_snapshots WHERE id = ?", (snapshot_id,)
    ).fetchone()
    return row is not None and row[0] in OPEN


def deletion_rows(db: sqlite3.Connection, bank: str, snapshot_id: str) -> list[str]:
    """The memories a deletion archived (its events name the snapshot) that are archived still by
    it: the last change of status of each is that archive (restored ones, and ones archived again
    since by something else, are not its)."""
    rows = db.execute(
        "SELECT m.id FROM memories m WHERE m.bank = ? AND m.status = 'archived' AND m.id IN"
        " (SELECT e.memory_id FROM audit_events e WHERE json_extract(e.after, '$.snapshot') = ?"
        "  AND e.action = 'archive' AND e.bank = ?)"
        " AND (SELECT json_extract(l.after, '$.snapshot') FROM audit_events l WHERE l.memory_id = m.id"
        "  AND json_extract(l.after, '$.status') IS NOT NULL ORDER BY l.seq DESC LIMIT 1) = ?",
        (bank, snapshot_id, bank, snapshot_id),
    ).fetchall()
    return [r["id"] for r in rows]
