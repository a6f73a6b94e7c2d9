"""Retain: each item becomes one memory, a row of ``store_units`` (there is no LLM extraction here:
each retained item is one ``world`` fact) and its document's chunk (``store_chunks``: the item's
text, as Hindsight keeps the text a fact came from), and the items that share a document id one
row of ``store_documents``."""

# SQL statements read better whole.

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from memwarden.backends.types import Item
from memwarden.db.common import chunked, now
from memwarden.db.database import Database
from memwarden.store import attachments, entities, pg_vectors, rules
from memwarden.store.attachments import Attachment
from memwarden.store.banks import ensure_bank
from memwarden.store.embedder import Embedder
from memwarden.store.errors import StoreError
from memwarden.store.index_cache import IndexCache
from memwarden.store.text import index_text, token_estimate


@dataclass
class RetainItem:
    content: str
    document_id: str | None = None
    tags: list[str] = field(default_factory=list)
    context: str | None = None
    metadata: dict[str, Any] | None = None
    timestamp: str | None = None
    vector: Any = None  # the content's embedding by this store's embedder, when the caller has it
    entities: list[str] = field(default_factory=list)  # the names the retain gave the item
    # Its document's and chunk's text when it differs from the memory's: attachments' placeholders.
    shown: str | None = None
    attachments: tuple[Attachment, ...] = ()
    append: bool = False  # ``update_mode: "append"``: added to its document, not replacing it


class _HeldDocument(NamedTuple):
    """What an appended document holds already: its text, tags, metadata and retain parameters, and
    the index its next chunk takes."""

    text: str
    tags: list[str]
    metadata: dict[str, Any]
    params: dict[str, Any]
    next_chunk: int


def _held_document(db: sqlite3.Connection, bank: str, document_id: str) -> _HeldDocument | None:
    row = db.execute(
        "SELECT original_text, tags, metadata, retain_params FROM store_documents WHERE bank_id = ? AND id = ?",
        (bank, document_id),
    ).fetchone()
    if row is None:
        return None
    last = db.execute(
        "SELECT MAX(chunk_index) FROM store_chunks WHERE bank_id = ? AND document_id = ?", (bank, document_id)
    ).fetchone()[0]
    return _HeldDocument(
        row["original_text"] or "",
        json.loads(row["tags"] or "[]"),
        json.loads(row["metadata"] or "{}"),
        json.loads(row["retain_params"] or "{}"),
        0 if last is None else last + 1,
    )


def stored(n: int, item: Item) -> RetainItem:
    """``items[n]`` as the store writes it: the text of its content blocks, their attachments kept
    (a block whose data is not base64 is Hindsight's ``400``), and the names of its ``entities``
    (``[{"text", "type"?}]`` as Hindsight's ``MemoryItem`` has them; anything else is left out)."""
    blocks = item.extra.get("content")
    content = attachments.content_of(blocks, f"items[{n}]") if isinstance(blocks, list) else None
    given = item.extra.get("entities")
    return RetainItem(
        content=content.text if content else item.content,
        shown=content.shown if content and content.shown != content.text else None,
        attachments=content.attachments if content else (),
        document_id=item.document_id,
        tags=list(item.tags),
        context=item.context,
        metadata=dict(item.metadata) if item.metadata else None,
        timestamp=item.timestamp,
        vector=item.vector,
        entities=[e["text"] for e in given if isinstance(e, dict) and isinstance(e.get("text"), str)]
        if isinstance(given, list)
        else [],
        append=item.extra.get("update_mode") == "append",
    )


def queued(item: RetainItem) -> dict[str, Any]:
    """``item`` as an async retain queues it (JSON): no vector (the worker embeds it), the
    attachments' bytes in base64."""
    out = {k: v for k, v in vars(item).items() if k not in ("vector", "attachments")}
    out["attachments"] = [{**vars(a), "data": base64.b64encode(a.data).decode()} for a in item.attachments]
    return out


def dequeued(payload: dict[str, Any]) -> RetainItem:
    """A queued item (:func:`queued`) back; an item queued before attachments were kept has none."""
    fields = dict(payload)
    kept = tuple(Attachment(**{**a, "data": base64.b64decode(a["data"])}) for a in fields.pop("attachments", ()) or ())
    return RetainItem(**fields, attachments=kept)


@dataclass(frozen=True)
class DocumentWrite:
    """What a retain did to one document: memories written, and the ones it replaced."""

    document_id: str
    added: int
    removed: int


def _vectors(embedder: Embedder, items: Sequence[RetainItem]) -> Any:
    """Every item's embedding: the ones given (of the right size), the others computed in one batch."""
    given: list[Any] = [
        i.vector if i.vector is not None and getattr(i.vector, "shape", None) == (embedder.dim,) else None
        for i in items
    ]
    missing = [n for n, v in enumerate(given) if v is None]
    if missing:
        computed = embedder.passages([items[n].content for n in missing])
        for n, v in zip(missing, computed, strict=True):
            given[n] = v
    return np.stack(given).astype(np.float32)


async def retain(
    ledger: Database,
    embedder: Embedder,
    indexes: IndexCache,
    bank: str,
    items: Sequence[RetainItem],
    document_tags: Sequence[str] = (),
) -> list[DocumentWrite]:
    """Store ``items`` (one memory each) atomically: every row, its FTS entry, its chunk and its
    vector in one transaction. A document id already present is replaced, as Hindsight does."""
    if not items:
        return []
    vectors = await asyncio.to_thread(_vectors, embedder, items)
    # The full-text column's terms, outside the transaction: the ledger has one writer, and a large
    # retain's tokenizing inside it made every other bank's write wait (issue #33: 1.6 s for 2 MB).
    indexed = await asyncio.to_thread(lambda: [index_text(i.content, bank) for i in items])
    ids = [uuid.uuid4().hex for _ in items]
    costs = [token_estimate(i.content) for i in items]
    name = embedder.name

    def write(db: sqlite3.Connection) -> tuple[list[str], list[int], list[DocumentWrite]]:
        ts = now()
        ensure_bank(db, bank, ts)
        row = db.execute("SELECT embedder FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        if row["embedder"] and row["embedder"] != name:
            raise StoreError(
                409,
                f"Bank '{bank}' holds vectors of the embedder {row['embedder']!r}, not {name!r}: "
                "re-embed it before writing with another model",
            )
        by_doc: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            by_doc.setdefault(item.document_id or uuid.uuid4().hex, []).append(i)
        # A retain with a document id the bank holds replaces that document, unless every item of it
        # says ``update_mode: "append"``: then its text and units are added to the document's.
        docs = list(by_doc)
        appended: dict[str, _HeldDocument] = {}
        for doc in docs:
            if all(items[p].append for p in by_doc[doc]) and (found := _held_document(db, bank, doc)) is not None:
                appended[doc] = found
        # A statement per kind of row, not per row (on PostgreSQL each statement is a round trip).
        gone: dict[str, list[str]] = {}
        for chunk in chunked([doc for doc in docs if doc not in appended]):
            marks = ",".join("?" * len(chunk))
            for memory_id, doc in db.execute(
                f"SELECT id, document_id FROM store_units WHERE bank_id = ? AND document_id IN ({marks})",  # noqa: S608
                (bank, *chunk),
            ):
                gone.setdefault(doc, []).append(memory_id)
            for table in ("store_units", "store_chunks", "store_attachments"):
                db.execute(f"DELETE FROM {table} WHERE bank_id = ? AND document_id IN ({marks})", (bank, *chunk))  # noqa: S608
        replaced = [memory_id for doc in docs for memory_id in gone.get(doc, ())]
        written = [DocumentWrite(doc, len(by_doc[doc]), len(gone.get(doc, ()))) for doc in docs]
        documents, chunks, units, held = [], [], [], []
        for doc, positions in by_doc.items():
            first = items[positions[0]]
            before = appended.get(doc)
            text = "\n".join(items[p].shown or items[p].content for p in positions)
            if before is not None:
                text = f"{before.text}\n{text}" if before.text else text
            attached = [a for p in positions for a in items[p].attachments]
            held += [(doc, a) for a in attached]
            named = {a.id: a.filename for a in attached if a.filename}
            tags = sorted(
                {*document_tags, *(t for p in positions for t in items[p].tags), *(before.tags if before else ())}
            )
            params = {
                k: v
                for k, v in {
                    "context": first.context,
                    "metadata": first.metadata,
                    "event_date": first.timestamp,
                    "attachment_filenames": named,
                }.items()
                if v
            }
            metadata = first.metadata
            if before is not None:  # what the document held stays, what the new items say is added
                kept_names = before.params.get("attachment_filenames") or {}
                params = {**before.params, **params}
                if kept_names or named:
                    params["attachment_filenames"] = {**kept_names, **named}
                metadata = {**before.metadata, **(first.metadata or {})} or None
                if metadata:
                    params["metadata"] = metadata
            documents.append(
                (
                    bank,
                    doc,
                    text,
                    hashlib.sha256(text.encode()).hexdigest(),
                    json.dumps(tags, ensure_ascii=False),
                    json.dumps(metadata, ensure_ascii=False) if metadata else None,
                    json.dumps(params, ensure_ascii=False) if params else None,
                    ts,
                    ts,
                )
            )
            for index, p in enumerate(positions, start=before.next_chunk if before else 0):
                item = items[p]
                unit_tags = sorted({*document_tags, *item.tags})
                chunk_id = f"{bank}_{doc}_{index}"  # Hindsight's chunk id: bank, document, index
                chunks.append((bank, doc, index, chunk_id, item.shown or item.content, ts))
                units.append(
                    (
                        ids[p],
                        bank,
                        doc,
                        item.content,
                        *indexed[p],
                        item.context or "",
                        "world",
                        json.dumps(unit_tags, ensure_ascii=False),
                        json.dumps(item.metadata or {}, ensure_ascii=False),
                        rules.mentioned_at(item.timestamp, ts),
                        ts,
                        ts,
                        name,
                        vectors[p].astype(np.float32).tobytes(),
                        costs[p],
                        chunk_id,
                        entities.encode(item.entities),
                        *pg_vectors.value(db, vectors[p])[2],
                    )
                )
        width = (name, int(vectors.shape[1]))
        if indexes.in_database and width not in indexes.indexed:  # PostgreSQL: its HNSW index, once
            pg_vectors.ensure_index(db, *width)
        attachments.insert(db, bank, held)
        db.executemany(
            "INSERT INTO store_documents (bank_id, id, original_text, content_hash, tags, metadata, retain_params,"
            " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (bank_id, id) DO UPDATE SET"
            " original_text = excluded.original_text, content_hash = excluded.content_hash, tags = excluded.tags,"
            " metadata = excluded.metadata, retain_params = excluded.retain_params, updated_at = excluded.updated_at",
            documents,
        )
        db.executemany(
            "INSERT INTO store_chunks (bank_id, document_id, chunk_index, chunk_id, text, created_at)"
            " VALUES (?,?,?,?,?,?)",
            chunks,
        )
        column, mark, _ = pg_vectors.value(db, vectors[0])
        db.executemany(
            "INSERT INTO store_units (id, bank_id, document_id, text, terms, term_count, context, fact_type,"  # noqa: S608
            " tags, metadata, mentioned_at, created_at, updated_at, embedder, embedding, tokens, chunk_id,"
            f" entities{column}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?{mark})",
            units,
        )
        seq_of: dict[str, int] = {}
        for chunk in chunked(ids):
            marks = ",".join("?" * len(chunk))
            seq_of.update(db.execute(f"SELECT id, seq FROM store_units WHERE id IN ({marks})", chunk).fetchall())  # noqa: S608
        seqs = [seq_of[i] for i in ids]
        db.execute(
            "UPDATE store_banks SET embedder = COALESCE(embedder, ?), last_write_at = ?, last_document_at = ?,"
            " updated_at = ? WHERE bank_id = ?",
            (name, ts, ts, ts, bank),
        )
        return replaced, seqs, written

    replaced, seqs, written = await ledger.write(write)
    if indexes.in_database:
        indexes.indexed.add((name, int(vectors.shape[1])))
    await indexes.replace(bank, replaced, ids, vectors, seqs, costs)
    return written
