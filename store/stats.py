"""A bank's aggregates: its tags with their counts, and its stats."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memwarden.db.database import Database
from memwarden.store import rules
from memwarden.store.banks import require_bank


async def tags(ledger: Database, bank: str, q: str | None, limit: int, offset: int) -> dict[str, Any]:
    await require_bank(ledger, bank)

    def read(db: sqlite3.Connection) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (raw,) in db.execute("SELECT tags FROM store_units WHERE bank_id = ? AND state = 'valid'", (bank,)):
            for tag in json.loads(raw):
                counts[tag] = counts.get(tag, 0) + 1
        return counts

    counts = await ledger.read(read)
    names = sorted(counts, key=lambda n: (-counts[n], n))  # Hindsight's order: count, then tag
    if q:
        pattern = rules.tag_pattern(q)
        names = [n for n in names if pattern.fullmatch(n)]
    page = names[offset : offset + limit]
    return {
        "items": [{"tag": n, "count": counts[n]} for n in page],
        "total": len(names),
        "limit": limit,
        "offset": offset,
    }


async def stats(ledger: Database, bank: str) -> dict[str, Any]:
    await require_bank(ledger, bank)

    def read(db: sqlite3.Connection) -> tuple[dict[str, int], int, dict[str, int], sqlite3.Row]:
        types = dict(
            db.execute(
                "SELECT fact_type, COUNT(*) FROM store_units WHERE bank_id = ? AND state = 'valid' GROUP BY fact_type",
                (bank,),
            ).fetchall()
        )
        docs = db.execute("SELECT COUNT(*) FROM store_documents WHERE bank_id = ?", (bank,)).fetchone()[0]
        ops = dict(
            db.execute(
                "SELECT status, COUNT(*) FROM store_operations WHERE bank_id = ? GROUP BY status", (bank,)
            ).fetchall()
        )
        row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        return types, int(docs), ops, row

    types, docs, ops, row = await ledger.read(read)
    return {
        "bank_id": bank,
        "total_nodes": sum(types.values()),
        "total_links": 0,
        "total_documents": docs,
        "nodes_by_fact_type": types,
        "links_by_link_type": {"temporal": 0, "semantic": 0, "entity": 0},  # no graph here
        "links_by_fact_type": {},
        "links_breakdown": {},
        "pending_operations": ops.get("pending", 0),
        "failed_operations": ops.get("failed", 0),
        "operations_by_status": ops,
        "last_consolidated_at": None,
        "last_memory_write_at": row["last_write_at"],
        "pending_consolidation": 0,
        "failed_consolidation": 0,
        "total_observations": 0,
    }
