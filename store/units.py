"""Memories as the API reads and curates them: list, get, edit, archive and restore (audited), their
history, and deletion.

Lifecycle: ``state`` is ``valid`` or ``invalidated`` (archived: out of recall and lists, kept); the
destructive API routes (document, memories, bank ``DELETE``) delete rows, and memwarden's guard in
front of them snapshots first and asks for confirmation.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from typing import Any

import numpy as np

from memwarden.backends.types import Memory, MemoryQuery, Page
from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.policies import tagfilter
from memwarden.store import attachments, entities, pg_vectors, rules
from memwarden.store.banks import require_bank
from memwarden.store.embedder import Embedder
from memwarden.store.errors import StoreError, obey
from memwarden.store.index_cache import IndexCache
from memwarden.store.shapes import entity_names, loads, memory_detail, memory_list_item
from memwarden.store.text import index_text, token_estimate


async def list_units(
    ledger: Database, bank: str, query: MemoryQuery, *, kind: str | None = None, contains: str | None = None
) -> Page[Memory]:
    """A page of the bank's memories, newest first: ``query``'s (its state ``valid`` unless it says
    ``invalidated``), of one ``kind`` (fact type) and with ``contains`` in their text when given."""
    await require_bank(ledger, bank)
    limit, offset = query.limit, query.offset
    state = query.state or "valid"
    if state not in ("valid", "invalidated"):
        raise StoreError(400, f"Invalid state '{state}': expected 'valid' or 'invalidated'.")
    where, args = ["bank_id = ?", "state = ?"], [bank, state]
    if kind:
        where.append("fact_type = ?")
        args.append(kind)
    if query.document_id:
        where.append("document_id = ?")
        args.append(query.document_id)
    if contains:
        where.append("lower(text) LIKE lower(?)")  # (LIKE is case-sensitive on PostgreSQL)
        args.append(f"%{contains}%")
    predicate = tagfilter.build(query.tags.tags, query.tags.match or "any", None)
    clause = " AND ".join(where)

    def read(db: sqlite3.Connection) -> tuple[list[sqlite3.Row], int]:
        if predicate is None:
            total = db.execute(f"SELECT COUNT(*) FROM store_units WHERE {clause}", args).fetchone()[0]  # noqa: S608
            rows = db.execute(
                f"SELECT * FROM store_units WHERE {clause} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608
                (*args, limit, offset),
            ).fetchall()
            return rows, int(total)
        everything = db.execute(f"SELECT * FROM store_units WHERE {clause} ORDER BY seq DESC", args).fetchall()  # noqa: S608
        matching = [r for r in everything if predicate(frozenset(loads(r["tags"], [])))]
        return matching[offset : offset + limit], len(matching)

    rows, total = await ledger.read(read)
    return Page([memory_list_item(r) for r in rows], total)


async def unit(ledger: Database, bank: str, memory_id: str) -> sqlite3.Row:
    """A memory's row, archived ones included; a ``404`` for an unknown id."""
    obey(rules.check_memory_id, memory_id)
    await require_bank(ledger, bank)
    row: sqlite3.Row | None = await ledger.read(
        lambda db: db.execute("SELECT * FROM store_units WHERE bank_id = ? AND id = ?", (bank, memory_id)).fetchone()
    )
    if row is None:
        raise StoreError(404, f"Memory unit '{memory_id}' not found")
    return row


async def get_unit(ledger: Database, bank: str, memory_id: str) -> Memory:
    """A memory, archived ones included (``state`` says which), with the fields of Hindsight's
    detail in its ``extra``."""
    return memory_detail(await unit(ledger, bank, memory_id))  # world facts: no history/source fields


async def update_unit(
    ledger: Database, embedder: Embedder, indexes: IndexCache, bank: str, memory_id: str, changes: Mapping[str, Any]
) -> Memory:
    """``PATCH`` a memory: text/context/dates/fact type, or ``state: invalidated`` (archive: out
    of recall and lists, kept) and ``state: valid`` (restore). Audited as ``update`` /
    ``archive`` / ``restore``. ``changes`` holds the fields the client set (validated as
    Hindsight's ``UpdateMemoryRequest``; a date set to null or "" clears it). An archived memory
    is restored before it can be edited, as in Hindsight."""
    row = await unit(ledger, bank, memory_id)
    state = changes.get("state")
    text = changes.get("text")
    if text is not None and not text.strip():
        raise StoreError(400, "text must not be empty.")
    edits = {k: v for k, v in changes.items() if k in ("context", "fact_type") and v is not None}
    edits.update(
        {
            k: obey(rules.edit_date, changes[k] or "")
            for k in ("occurred_start", "occurred_end", "mentioned_at")
            if k in changes
        }
    )
    given = changes.get("entities")  # replace the memory's entities (an edit, as in Hindsight)
    if (text is not None or edits or given is not None) and row["state"] != "valid":
        raise StoreError(400, "Cannot edit an invalidated memory; revert it to 'valid' first.")
    vector = await asyncio.to_thread(embedder.passages, [text]) if text is not None else None

    def write(db: sqlite3.Connection) -> sqlite3.Row:
        ts = now()
        sets: list[str] = ["updated_at = ?"]
        args: list[Any] = [ts]
        before: dict[str, Any] = {}
        after: dict[str, Any] = {}
        if text is not None and text != row["text"]:
            sets += ["text = ?", "terms = ?", "term_count = ?", "embedding = ?", "embedder = ?", "edited_at = ?"]
            sets.append("tokens = ?")
            args += [
                text,
                *index_text(text, bank),
                vector[0].tobytes() if vector is not None else None,
                embedder.name,
                ts,
                token_estimate(text),
            ]
            also, pg_vector = pg_vectors.assignment(db, vector[0] if vector is not None else None)
            if also:
                sets.append(also.removeprefix(", "))
                args += pg_vector
            before["text"], after["text"] = row["text"], text
        if given is not None and entities.encode(given) != row["entities"]:
            sets.append("entities = ?")
            args.append(entities.encode(given))
            before["entities"], after["entities"] = entity_names(row), list(entities.names(given).values())
        for key, value in edits.items():
            if value != row[key]:
                sets.append(f"{key} = ?")
                args.append(value)
                before[key], after[key] = row[key], value
        action = "update"
        if state == "invalidated" and row["state"] != "invalidated":
            sets += ["state = 'invalidated'", "invalidation_reason = ?", "invalidated_at = ?"]
            args += [changes.get("reason"), ts]
            before["state"], after["state"], action = row["state"], "invalidated", "archive"
        elif state == "valid" and row["state"] != "valid":
            sets += ["state = 'valid'", "invalidation_reason = NULL", "invalidated_at = NULL"]
            before["state"], after["state"], action = row["state"], "valid", "restore"
        db.execute(f"UPDATE store_units SET {', '.join(sets)} WHERE id = ?", (*args, memory_id))  # noqa: S608
        if after:
            append_events(
                db,
                [
                    AuditEvent(
                        action=action,
                        bank=bank,
                        memory_id=memory_id,
                        source="store",
                        reason=changes.get("reason"),
                        before=before,
                        after=after,
                    )
                ],
            )
        result: sqlite3.Row = db.execute("SELECT * FROM store_units WHERE id = ?", (memory_id,)).fetchone()
        return result

    updated = await ledger.write(write)
    index = indexes.loaded(bank)
    if index is not None:
        if updated["state"] != "valid":
            index.remove([memory_id])
        elif vector is not None or row["state"] != "valid":
            vec = vector[0] if vector is not None else np.frombuffer(updated["embedding"], dtype=np.float32)
            index.add([memory_id], vec[None, :], [updated["seq"]], [updated["tokens"]])
    return memory_detail(updated)


async def history(ledger: Database, bank: str, memory_id: str) -> list[dict[str, Any]]:
    """The memory's changes, from the audit log (oldest first)."""

    def read(db: sqlite3.Connection) -> list[dict[str, Any]]:
        rows = db.execute(
            "SELECT ts, action, source, reason, before, after FROM audit_events WHERE memory_id = ? AND bank = ?"
            " ORDER BY seq",
            (memory_id, bank),
        ).fetchall()
        return [
            {
                "changed_at": r["ts"],
                "action": r["action"],
                "source": r["source"],
                "reason": r["reason"],
                "before": loads(r["before"], None),
                "after": loads(r["after"], None),
            }
            for r in rows
        ]

    result: list[dict[str, Any]] = await ledger.read(read)
    return result


async def unit_history(ledger: Database, bank: str, memory_id: str) -> list[dict[str, Any]]:
    row = await unit(ledger, bank, memory_id)
    if row["state"] != "valid":
        raise StoreError(404, f"Memory unit '{memory_id}' not found")
    return await history(ledger, bank, memory_id)


async def delete_units(ledger: Database, indexes: IndexCache, bank: str, fact_type: str | None) -> dict[str, Any]:
    await require_bank(ledger, bank)

    def write(db: sqlite3.Connection) -> tuple[int, list[str]]:
        where, args = "bank_id = ?", [bank]
        if fact_type:
            where, args = "bank_id = ? AND fact_type = ?", [bank, fact_type]
        ids = [r[0] for r in db.execute(f"SELECT id FROM store_units WHERE {where}", args)]  # noqa: S608
        db.execute(f"DELETE FROM store_units WHERE {where}", args)  # noqa: S608
        if not fact_type:
            db.execute("DELETE FROM store_documents WHERE bank_id = ?", (bank,))
            db.execute("DELETE FROM store_chunks WHERE bank_id = ?", (bank,))
            attachments.delete(db, bank)
        return len(ids), ids

    n, ids = await ledger.write(write)
    indexes.remove(bank, ids)
    which = f" of type '{fact_type}'" if fact_type else ""
    return {"success": True, "message": f"Cleared {n} memory unit(s){which} from bank '{bank}'", "deleted_count": n}
