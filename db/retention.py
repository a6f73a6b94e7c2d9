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
_OPEN = ("applied", "rollback_incomplete", "unverified")  # a deletion that can still be undone


def deletions_past(db: sqlite3.Connection, cutoff: str, *, bank: str | None) -> dict[str, tuple[str, list[str]]]:
    """Per deletion snapshot taken before ``cutoff`` and not restored: its bank, and the ids of the
    memories it archived that are archived still (restored ones, and ones changed since, are not)."""
    where, args = f"reason IN ({','.join('?' * len(DELETIONS))}) AND created_at < ?", [*DELETIONS, cutoff]
    where += f" AND COALESCE(outcome, 'applied') IN ({','.join('?' * len(_OPEN))})"
    args += _OPEN
    if bank is not None:
        where += " AND bank = ?"
        args.append(bank)
    out: dict[str, tuple[str, list[str]]] = {}
    for snap in db.execute(f"SELECT id, bank, reason, request_id FROM config_snapshots WHERE {where}", args):  # noqa: S608
        rows = db.execute(
            "SELECT m.id FROM memories m WHERE m.bank = ? AND m.status = 'archived' AND m.id IN"
            " (SELECT e.memory_id FROM audit_events e WHERE e.bank = ? AND e.action = 'archive' AND e.rule = ?"
            " AND e.request_id IS ? AND e.source = 'config')"
            " AND (SELECT e2.action FROM audit_events e2 WHERE e2.memory_id = m.id ORDER BY e2.seq DESC LIMIT 1)"
            " = 'archive'",
            (snap["bank"], snap["bank"], snap["reason"], snap["request_id"]),
        ).fetchall()
        out[snap["id"]] = (snap["bank"], [r["id"] for r in rows])
    return out
