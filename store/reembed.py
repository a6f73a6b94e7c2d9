"""A change of embedder: a planned re-embed of a bank, never a mix of two models' vectors."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.store import pg_vectors
from memwarden.store.banks import require_bank
from memwarden.store.embedder import Embedder, Vector
from memwarden.store.index_cache import IndexCache


async def reembed(
    ledger: Database, embedder: Embedder, indexes: IndexCache, bank: str, *, batch: int = 256
) -> dict[str, Any]:
    """Embed every memory of ``bank`` that the current embedder did not make, then record it as
    the bank's embedder. Until then the bank refuses writes and recall leaves out vectors of
    the other model (keyword retrieval only for those memories). Resumable: rows already
    re-embedded are skipped."""
    row = await require_bank(ledger, bank)
    name = embedder.name
    before = row["embedder"]
    done = 0
    while True:
        todo: list[tuple[str, str]] = await ledger.read(
            lambda db: db.execute(
                "SELECT id, text FROM store_units WHERE bank_id = ? AND (embedder IS NULL OR embedder != ?) LIMIT ?",
                (bank, name, batch),
            ).fetchall()
        )
        if not todo:
            break
        vectors = await asyncio.to_thread(embedder.passages, [t for _, t in todo])

        def write(db: sqlite3.Connection, todo: list[tuple[str, str]] = todo, vectors: Vector = vectors) -> None:
            for i, (memory_id, _) in enumerate(todo):
                also, pg_vector = pg_vectors.assignment(db, vectors[i])
                db.execute(
                    f"UPDATE store_units SET embedding = ?, embedder = ?{also} WHERE id = ?",  # noqa: S608
                    (vectors[i].tobytes(), name, *pg_vector, memory_id),
                )

        await ledger.write(write)
        done += len(todo)

    def finish(db: sqlite3.Connection) -> None:
        db.execute("UPDATE store_banks SET embedder = ?, updated_at = ? WHERE bank_id = ?", (name, now(), bank))
        append_events(
            db,
            [
                AuditEvent(
                    action="update",
                    bank=bank,
                    source="store",
                    rule="store.reembed",
                    reason=f"re-embedded {done} memories with {name}",
                    before={"embedder": before},
                    after={"embedder": name, "memories": done},
                )
            ],
        )

    await ledger.write(finish)
    await indexes.invalidate(bank)  # rebuilt from the new vectors on next use
    return {"bank_id": bank, "embedder": name, "previous_embedder": before, "reembedded": done}
