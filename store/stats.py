"""A bank's aggregates: its tags with their counts, and its stats."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memwarden.backends.types import BankStats
from memwarden.db.common import on_postgres
from memwarden.db.database import Database
from memwarden.policies.bank_config import WATCHABLE, watched_counts
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


async def stats(ledger: Database, bank: str) -> BankStats:
    """What ``bank`` holds by kind, its documents and its queued retains; ``raw`` is Hindsight's
    ``BankStatsResponse`` (no graph, no observations here)."""
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
    raw = {
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
    return BankStats(watched_counts(raw, WATCHABLE), pending=ops.get("pending", 0), raw=raw)


async def index_counts(ledger: Database, name: str, bank: str, *, fulltext: bool = True) -> dict[str, Any]:
    """The bank's rows and its vectors from the current embedder, and (every bank) rows vs
    full-text entries: the health report's consistency check of the store's indexes."""

    def read(db: sqlite3.Connection) -> dict[str, Any]:
        vector = "embedding_v" if on_postgres(db) else "embedding"  # PostgreSQL keeps pgvector's alone
        row = db.execute(
            f"SELECT count(*) AS rows_, count(*) FILTER (WHERE {vector} IS NOT NULL AND embedder = ?) AS vectors"  # noqa: S608
            " FROM store_units WHERE bank_id = ?",
            (name, bank),
        ).fetchone()
        total_rows = db.execute("SELECT count(*) FROM store_units").fetchone()[0]
        if not fulltext:
            fts = None
        elif on_postgres(db):  # the posting list: every memory with terms has postings (none without terms)
            missing = db.execute(
                "SELECT count(*) FROM store_units u WHERE u.term_count > 0"
                " AND NOT EXISTS (SELECT 1 FROM store_terms t WHERE t.seq = u.seq)"
            ).fetchone()[0]
            fts = total_rows - missing
        else:
            fts = db.execute("SELECT count(*) FROM store_units_fts_docsize").fetchone()[0]
        return {
            "rows": row["rows_"],
            "vectors": row["vectors"] or 0,
            "embedder": name,
            "all_banks_rows": total_rows,
            "all_banks_fulltext_entries": fts,
        }

    return await ledger.read(read)
