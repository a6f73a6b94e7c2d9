"""The ``plans`` table: batches of operations on memories, made as a dry run and applied once with
their confirmation phrase, and the states of their targets.

Statuses: ``planned`` → ``applying`` (claimed by :func:`claim_plan`, so a plan runs once) →
``applied`` | ``partially_applied``; or ``stale``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from memwarden.db.common import now
from memwarden.db.memory_reads import row_by_id
from memwarden.db.records import LedgerMemory

PLAN_COLUMNS = "id, bank, status, phrase, reason, operations, result, created_at, expires_at, applied_at"
LIST_PLANS = f"SELECT {PLAN_COLUMNS} FROM plans WHERE bank = ? ORDER BY created_at DESC"  # noqa: S608


def plan_view(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["operations"] = json.loads(out["operations"])
    out["result"] = json.loads(out["result"]) if out["result"] else None
    return out


def insert_plan(
    db: sqlite3.Connection,
    *,
    plan_id: str,
    bank: str,
    phrase: str,
    reason: str | None,
    operations: Sequence[dict[str, Any]],
    created_at: str,
    expires_at: str,
) -> None:
    """Store a new plan, ``planned``."""
    db.execute(
        f"INSERT INTO plans ({PLAN_COLUMNS}) VALUES (?, ?, 'planned', ?, ?, ?, NULL, ?, ?, NULL)",  # noqa: S608
        (plan_id, bank, phrase, reason, json.dumps(operations, ensure_ascii=False), created_at, expires_at),
    )


def get_plan(db: sqlite3.Connection, bank: str, plan_id: str) -> dict[str, Any] | None:
    """One plan of ``bank`` (None: no such plan)."""
    row = db.execute(f"SELECT {PLAN_COLUMNS} FROM plans WHERE bank = ? AND id = ?", (bank, plan_id)).fetchone()  # noqa: S608
    return plan_view(row) if row is not None else None


def list_plans(db: sqlite3.Connection, bank: str) -> list[dict[str, Any]]:
    """The bank's plans, newest first."""
    return [plan_view(row) for row in db.execute(LIST_PLANS, (bank,)).fetchall()]


def claim_plan(db: sqlite3.Connection, plan_id: str) -> bool:
    """``planned`` → ``applying``; False when the plan was not ``planned`` (someone else claimed it)."""
    claimed: int = db.execute(
        "UPDATE plans SET status = 'applying' WHERE id = ? AND status = 'planned'", (plan_id,)
    ).rowcount
    return bool(claimed)


def finish_plan(db: sqlite3.Connection, plan_id: str, status: str, result: dict[str, Any]) -> None:
    """Record how applying the plan ended: its final status and what was (not) done."""
    db.execute(
        "UPDATE plans SET status = ?, result = ?, applied_at = ? WHERE id = ?",
        (status, json.dumps(result, ensure_ascii=False), now(), plan_id),
    )


def target_state(memory: LedgerMemory) -> dict[str, Any]:
    """What a plan records of its target, and compares before applying: changed means stale."""
    return {"status": memory.status, "content_hash": memory.content_hash, "updated_at": memory.updated_at}


def current_target_state(db: sqlite3.Connection, memory_id: str) -> dict[str, Any] | None:
    """The :func:`target_state` of a memory now (None: it is gone)."""
    memory = row_by_id(db, memory_id)
    return None if memory is None else target_state(memory)


def written_by(
    db: sqlite3.Connection,
    bank: str,
    *,
    writer: str | None,
    channel: str | None,
    request_id: str | None,
    since: str | None,
    until: str | None,
    limit: int,
) -> tuple[list[str], int]:
    """The active memories of ``bank`` that one writer (an API key's id), one channel or one
    request wrote, from ``since`` up to ``until`` (ISO timestamps in UTC, as the ledger keeps them;
    either open), oldest first, at most ``limit``; and how many of the bank's memories that
    selection holds for review (already kept from recall)."""
    where, args = ["bank = ?"], [bank]
    for column, value in (("writer", writer), ("channel", channel), ("request_id", request_id)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if since is not None:
        where.append("created_at >= ?")
        args.append(since)
    if until is not None:
        where.append("created_at <= ?")
        args.append(until)
    clause = " AND ".join(where)
    ids = [
        r[0]
        for r in db.execute(
            f"SELECT id FROM memories WHERE {clause} AND status = 'active' ORDER BY created_at, id LIMIT ?",  # noqa: S608
            (*args, limit),
        )
    ]
    held: int = db.execute(
        f"SELECT count(*) FROM memories WHERE {clause} AND status = 'review'",  # noqa: S608
        args,
    ).fetchone()[0]
    return ids, held
