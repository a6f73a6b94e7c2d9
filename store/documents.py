"""Documents: the text a retain wrote under one document id (an item without one gets its own) and
the memories made of it; list, get, re-tag and delete."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from memwarden.backends.types import Document, Page, TagFilter
from memwarden.db.common import now, on_postgres
from memwarden.db.database import Database
from memwarden.policies import tagfilter
from memwarden.store import attachments
from memwarden.store.banks import require_bank
from memwarden.store.errors import StoreError
from memwarden.store.index_cache import IndexCache
from memwarden.store.shapes import document, loads
from memwarden.store.text import token_estimate


async def list_documents(
    ledger: Database, bank: str, *, limit: int, offset: int, q: str | None = None, tags: TagFilter | None = None
) -> Page[Document]:
    """A page of the bank's documents, newest first: those ``tags`` lets through, with ``q`` in
    their id or text when given."""
    await require_bank(ledger, bank)
    predicate = tagfilter.build(tags.tags, tags.match or "any", None) if tags is not None else None

    def read(db: sqlite3.Connection) -> tuple[list[tuple[sqlite3.Row, int]], int]:
        counts = dict(
            db.execute(
                "SELECT document_id, COUNT(*) FROM store_units WHERE bank_id = ? GROUP BY document_id", (bank,)
            ).fetchall()
        )
        rows = db.execute(
            "SELECT * FROM store_documents WHERE bank_id = ? ORDER BY created_at DESC, id", (bank,)
        ).fetchall()
        kept = [
            r
            for r in rows
            if (predicate is None or predicate(frozenset(loads(r["tags"], []))))
            and (not q or q.lower() in (r["id"] + " " + (r["original_text"] or "")).lower())
        ]
        return [(r, counts.get(r["id"], 0)) for r in kept[offset : offset + limit]], len(kept)

    rows, total = await ledger.read(read)
    return Page([document(r, n) for r, n in rows], total)


async def get_document(ledger: Database, bank: str, document_id: str) -> Document:
    """A document with its text, its memories counted by kind and its attachments
    (Hindsight's ``DocumentResponse``)."""
    await require_bank(ledger, bank)

    def read(db: sqlite3.Connection) -> tuple[sqlite3.Row | None, dict[str, int], list[dict[str, Any]] | None]:
        row = db.execute("SELECT * FROM store_documents WHERE bank_id = ? AND id = ?", (bank, document_id)).fetchone()
        held = attachments.named_in(db, bank, document_id, row["original_text"] or "") if row else None
        types = dict(
            db.execute(
                "SELECT fact_type, COUNT(*) FROM store_units WHERE bank_id = ? AND document_id = ? GROUP BY fact_type",
                (bank, document_id),
            ).fetchall()
        )
        return row, types, held

    row, types, held = await ledger.read(read)
    if row is None:
        raise StoreError(404, "Document not found")
    return Document(
        id=row["id"],
        tags=tuple(loads(row["tags"], [])),
        content_hash=row["content_hash"],
        memory_count=sum(types.values()),
        extra={
            "bank_id": bank,
            "original_text": row["original_text"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "nodes_by_fact_type": {
                "world": types.get("world", 0),
                "experience": types.get("experience", 0),
                "observation": 0,
            },
            "document_metadata": loads(row["metadata"], None),
            "retain_params": loads(row["retain_params"], None),
            "observation_scopes": None,
            "attachments": held,
        },
    )


async def update_document_tags(ledger: Database, bank: str, document_id: str, tags: Sequence[str]) -> dict[str, Any]:
    await get_document(ledger, bank, document_id)

    def write(db: sqlite3.Connection) -> None:
        encoded = json.dumps(sorted(set(tags)), ensure_ascii=False)
        ts = now()
        db.execute(
            "UPDATE store_documents SET tags = ?, updated_at = ? WHERE bank_id = ? AND id = ?",
            (encoded, ts, bank, document_id),
        )
        db.execute(
            "UPDATE store_units SET tags = ?, updated_at = ? WHERE bank_id = ? AND document_id = ?",
            (encoded, ts, bank, document_id),
        )

    await ledger.write(write)
    return {"success": True}


def purge_index(db: sqlite3.Connection) -> None:
    """Rewrite the full-text index whole (FTS5's ``optimize``): a deleted memory's terms stay in its
    old segments, under a deletion marker, until they are merged — which a quiet bank may never
    do. After an erasure this takes them out (SQLite before 3.42 has no ``secure-delete`` option
    for FTS5). Costs a pass over the index: called once per erasure, not per deletion. (PostgreSQL's
    posting list keeps no deleted rows: nothing to do.)"""
    if on_postgres(db):
        return
    db.execute("INSERT INTO store_units_fts (store_units_fts) VALUES ('optimize')")


async def delete_document(ledger: Database, indexes: IndexCache, bank: str, document_id: str) -> dict[str, Any]:
    await get_document(ledger, bank, document_id)

    def write(db: sqlite3.Connection) -> list[str]:
        ids = [
            r[0]
            for r in db.execute("SELECT id FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id))
        ]
        db.execute("DELETE FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id))
        db.execute("DELETE FROM store_documents WHERE bank_id = ? AND id = ?", (bank, document_id))
        db.execute("DELETE FROM store_chunks WHERE bank_id = ? AND document_id = ?", (bank, document_id))
        attachments.delete(db, bank, document_id)
        return ids

    ids = await ledger.write(write)
    indexes.remove(bank, ids)
    return {
        "success": True,
        "message": f"Document '{document_id}' and {len(ids)} associated memory units deleted successfully",
        "document_id": document_id,
        "memory_units_deleted": len(ids),
    }


# -- chunks: the text each retained item gave its document ----------------------------------------


def _chunk(db: sqlite3.Connection, r: sqlite3.Row) -> dict[str, Any]:
    """Hindsight's ``ChunkResponse``."""
    return {
        "chunk_id": r["chunk_id"],
        "document_id": r["document_id"],
        "bank_id": r["bank_id"],
        "chunk_index": r["chunk_index"],
        "chunk_text": r["text"],
        "created_at": r["created_at"],
        "attachments": attachments.named_in(db, r["bank_id"], r["document_id"], r["text"]),
    }


async def list_chunks(ledger: Database, bank: str, document_id: str, limit: int, offset: int) -> dict[str, Any]:
    """``GET …/documents/{id}/chunks``: a page of the document's chunks by index; ``404`` when the
    bank holds no such document (the bank itself is not looked up, as in Hindsight)."""

    def read(db: sqlite3.Connection) -> tuple[bool, int, list[dict[str, Any]]]:
        held = db.execute("SELECT 1 FROM store_documents WHERE bank_id = ? AND id = ?", (bank, document_id)).fetchone()
        where = "FROM store_chunks WHERE bank_id = ? AND document_id = ?"
        total = db.execute(f"SELECT COUNT(*) {where}", (bank, document_id)).fetchone()[0]
        rows = db.execute(
            f"SELECT * {where} ORDER BY chunk_index LIMIT ? OFFSET ?",
            (bank, document_id, limit, offset),
        ).fetchall()
        return held is not None, int(total), [_chunk(db, r) for r in rows]

    held, total, rows = await ledger.read(read)
    if not held:
        raise StoreError(404, "Document not found")
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


async def get_chunk(ledger: Database, chunk_id: str) -> dict[str, Any]:
    """``GET /v1/default/chunks/{chunk_id}``: a chunk by its id (``{bank}_{document}_{index}``: the
    first written when two banks' ids spell the same); ``404`` when none has it."""

    def read(db: sqlite3.Connection) -> dict[str, Any] | None:
        row = db.execute(
            "SELECT c.* FROM store_chunks c JOIN store_banks b ON b.bank_id = c.bank_id WHERE c.chunk_id = ?"
            " ORDER BY b.created_at, c.bank_id LIMIT 1",
            (chunk_id,),
        ).fetchone()
        return None if row is None else _chunk(db, row)

    chunk = await ledger.read(read)
    if chunk is None:
        raise StoreError(404, "Chunk not found")
    return chunk


def recalled_chunks(db: sqlite3.Connection, *, bank: str, chunk_ids: Sequence[str], max_tokens: int) -> dict[str, Any]:
    """A recall's ``chunks`` (``include.chunks``): the chunks its results came from, in their order,
    as Hindsight answers them (``{chunk_id: {id, text, chunk_index, truncated, attachments}}``), until
    ``max_tokens`` are spent; the chunk that crosses the budget is cut to fit (``truncated``)."""
    wanted = list(dict.fromkeys(chunk_ids))[:900]  # under SQLite's limit on bound variables
    if not wanted or max_tokens <= 0:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = {
        r["chunk_id"]: r
        for r in db.execute(
            f"SELECT chunk_id, chunk_index, document_id, text FROM store_chunks WHERE bank_id = ?"  # noqa: S608
            f" AND chunk_id IN ({marks})",
            (bank, *wanted),
        )
    }
    out: dict[str, Any] = {}
    left = max_tokens
    for chunk_id in wanted:
        if (row := rows.get(chunk_id)) is None or left <= 0:
            continue
        text, cost = row["text"], token_estimate(row["text"])
        cut = cost > left
        if cut:  # the longest prefix within what is left
            low, high = 0, len(text)
            while low < high:
                mid = (low + high + 1) // 2
                low, high = (mid, high) if token_estimate(text[:mid]) <= left else (low, mid - 1)
            text = text[:low]
        left -= token_estimate(text)
        out[chunk_id] = {
            "id": chunk_id,
            "text": text,
            "chunk_index": row["chunk_index"],
            "truncated": cut,
            "attachments": attachments.named_in(db, bank, row["document_id"], row["text"]),
        }
    return out
