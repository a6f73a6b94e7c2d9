"""The reports' reads of the ledger: the active memories a cleanup looks at, and the
counts the health report summarizes."""

from __future__ import annotations

import sqlite3
from typing import Any

from memwarden.db.records import BRIEF_RECORD, MemoryBrief


def active_oldest_first(db: sqlite3.Connection, bank: str) -> list[MemoryBrief]:
    """The bank's active memories, oldest first by event time (else when memwarden saw them)."""
    found = db.execute(
        f"SELECT {BRIEF_RECORD} FROM memories WHERE bank = ? AND status = 'active'"  # noqa: S608
        " ORDER BY COALESCE(event_time, created_at), created_at",
        (bank,),
    )
    return [MemoryBrief.of(r) for r in found]


def active_per_document(db: sqlite3.Connection, bank: str) -> dict[str | None, int]:
    """How many active memories each document of the bank holds."""
    return dict(
        db.execute(
            "SELECT document_id, count(*) FROM memories WHERE bank = ? AND status = 'active' GROUP BY document_id",
            (bank,),
        ).fetchall()
    )


def health_counts(db: sqlite3.Connection, bank: str, since: str) -> dict[str, Any]:
    """The ledger's side of the health report: memories by status (all, and new since ``since``),
    events by action since then, single-valued topic keys held by more than one active memory, the
    documents of active memories and every document memwarden has seen."""
    statuses = dict(
        db.execute("SELECT status, count(*) FROM memories WHERE bank = ? GROUP BY status", (bank,)).fetchall()
    )
    new = dict(
        db.execute(
            "SELECT status, count(*) FROM memories WHERE bank = ? AND created_at >= ? GROUP BY status",
            (bank, since),
        ).fetchall()
    )
    actions = dict(
        db.execute(
            "SELECT action, count(*) FROM audit_events WHERE bank = ? AND ts >= ? GROUP BY action", (bank, since)
        ).fetchall()
    )
    conflicts = db.execute(
        "SELECT topic_key, count(*) AS n FROM memories WHERE bank = ? AND status = 'active'"
        " AND topic_key IS NOT NULL AND cardinality IN ('single', 'replace') GROUP BY topic_key HAVING count(*) > 1",
        (bank,),
    ).fetchall()
    documents = [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT document_id FROM memories"
            " WHERE bank = ? AND status = 'active' AND document_id IS NOT NULL",
            (bank,),
        )
    ]
    known = {
        r[0]
        for r in db.execute(
            "SELECT DISTINCT document_id FROM memories WHERE bank = ? AND document_id IS NOT NULL", (bank,)
        )
    }
    return {
        "statuses": statuses,
        "new": new,
        "actions": actions,
        "conflicts": [{"topic_key": r[0], "active": r[1]} for r in conflicts],
        "documents": documents,
        "known_documents": known,
    }


def status_totals(db: sqlite3.Connection) -> dict[str, int]:
    """Memories in the ledger by status, all banks (the metrics page)."""
    return {row[0]: int(row[1]) for row in db.execute("SELECT status, count(*) FROM memories GROUP BY status")}
