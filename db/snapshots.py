"""The ``config_snapshots`` table: a bank's config, stats, watched counts and inventory taken before
a config change or a destructive operation, and the change's outcome."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from memwarden.db.common import now


@dataclass
class Snapshot:
    id: str
    bank: str
    created_at: str
    reason: str
    settled: bool
    config: dict[str, Any]
    overrides: dict[str, Any]
    stats: dict[str, Any]
    counts: dict[str, int]
    inventory: dict[str, list[dict[str, Any]]]
    request_id: str | None = None
    change: Any = None
    outcome: str | None = None
    outcome_detail: Any = None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "bank": self.bank,
            "created_at": self.created_at,
            "reason": self.reason,
            "settled": self.settled,
            "counts": self.counts,
            "memories": len(self.inventory.get("memories", [])),
            "documents": len(self.inventory.get("documents", [])),
            "override_keys": sorted(self.overrides),
            "change": self.change,
            "outcome": self.outcome,
            "outcome_detail": self.outcome_detail,
            "request_id": self.request_id,
        }


def snapshot_from_row(row: sqlite3.Row) -> Snapshot:
    def load(v: str | None) -> Any:
        return None if v is None else json.loads(v)

    return Snapshot(
        id=row["id"],
        bank=row["bank"],
        created_at=row["created_at"],
        reason=row["reason"],
        settled=bool(row["settled"]),
        config=load(row["config"]),
        overrides=load(row["overrides"]),
        stats=load(row["stats"]),
        counts=load(row["counts"]),
        inventory=load(row["inventory"]),
        request_id=row["request_id"],
        change=load(row["change"]),
        outcome=row["outcome"],
        outcome_detail=load(row["outcome_detail"]),
    )


# What a list of snapshots shows: everything but the config, the stats and the inventory (a
# bank's whole memory list at the time: megabytes at a million memories), whose sizes are columns.
_SUMMARY_COLUMNS = (
    "id, bank, created_at, reason, settled, counts, inventory_memories, inventory_documents, overrides, change,"
    " outcome, outcome_detail, request_id"
)


def snapshot_summaries(db: sqlite3.Connection, bank: str, limit: int = 100) -> list[dict[str, Any]]:
    """The bank's newest snapshots as :meth:`Snapshot.summary` gives them, no inventory read."""
    rows = db.execute(
        f"SELECT {_SUMMARY_COLUMNS} FROM config_snapshots WHERE bank = ?"  # noqa: S608
        " ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (bank, limit),
    ).fetchall()
    return [
        {
            "id": row["id"],
            "bank": row["bank"],
            "created_at": row["created_at"],
            "reason": row["reason"],
            "settled": bool(row["settled"]),
            "counts": json.loads(row["counts"]),
            "memories": row["inventory_memories"],
            "documents": row["inventory_documents"],
            "override_keys": sorted(json.loads(row["overrides"])),
            "change": None if row["change"] is None else json.loads(row["change"]),
            "outcome": row["outcome"],
            "outcome_detail": None if row["outcome_detail"] is None else json.loads(row["outcome_detail"]),
            "request_id": row["request_id"],
        }
        for row in rows
    ]


def get_snapshot(db: sqlite3.Connection, bank: str, snapshot_id: str) -> Snapshot | None:
    row = db.execute("SELECT * FROM config_snapshots WHERE bank = ? AND id = ?", (bank, snapshot_id)).fetchone()
    return snapshot_from_row(row) if row else None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def insert_snapshot(db: sqlite3.Connection, snap: Snapshot) -> None:
    """Store a new snapshot (its outcome is set later, by :func:`set_outcome_row`)."""
    db.execute(
        "INSERT INTO config_snapshots (id, bank, created_at, reason, request_id, settled, config, overrides, stats,"
        " counts, inventory, updated_at, inventory_memories, inventory_documents) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            snap.id,
            snap.bank,
            snap.created_at,
            snap.reason,
            snap.request_id,
            int(snap.settled),
            _dump(snap.config),
            _dump(snap.overrides),
            _dump(snap.stats),
            _dump(snap.counts),
            _dump(snap.inventory),
            snap.created_at,
            len(snap.inventory.get("memories", [])),
            len(snap.inventory.get("documents", [])),
        ),
    )


def set_outcome_row(
    db: sqlite3.Connection, snapshot_id: str, outcome: str, detail: Any = None, change: Any = None
) -> None:
    """Record how the change the snapshot guarded ended (``change`` None: the stored one is kept)."""
    db.execute(
        "UPDATE config_snapshots SET outcome = ?, outcome_detail = ?, change = COALESCE(?, change), updated_at = ?"
        " WHERE id = ?",
        (outcome, _dump(detail), None if change is None else _dump(change), now(), snapshot_id),
    )
