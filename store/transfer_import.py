"""A bank's import from a transfer archive (:mod:`store.archive`, checked before anything happens):
all of it or nothing.

Two modes, as Hindsight's ``POST …/transfer/import``: ``restore`` writes a whole bank into a bank
that does not exist yet (its profile and config from the archive's bank row), ``merge`` folds the
archive's documents into a bank (created if need be), a document id the bank holds being
skipped, replaced or imported under a new id. Facts are taken as they are (no extraction) and
embedded with the store's embedder before the one write transaction that holds every document,
every memory, the ledger's rows with their ``import`` events, the bank's ``import`` event and the
finished operation; a failure anywhere leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.db.memory_transfer import restore_rows, retire_document_rows, taken_ids
from memwarden.store import archive, attachments, entities, pg_vectors, rules
from memwarden.store.archive import ArchivedUnit, Document, LedgerBlock
from memwarden.store.archive_read import Archive
from memwarden.store.banks import bank_fields, ensure_bank
from memwarden.store.embedder import Embedder
from memwarden.store.errors import StoreError, bank_not_found, obey
from memwarden.store.feedback import Feedback
from memwarden.store.index_cache import IndexCache
from memwarden.store.text import index_text, token_estimate
from memwarden.store.transfer import record

Mode = Literal["restore", "merge"]
Conflict = Literal["skip", "replace", "new-id"]
KEPT_TYPES = ("world", "experience")  # the store's fact types; Hindsight's observations are derived


@dataclass(frozen=True)
class ImportRequest:
    """Where the archive goes. ``bank``: the path's bank (the operation is recorded against it);
    ``target``: the bank written (restore: a new one; merge: ``bank``)."""

    bank: str
    target: str
    mode: Mode
    conflict: Conflict = "skip"
    scope: archive.Scope = field(default_factory=archive.Scope)
    kind: str = "import_bank"


@dataclass
class _Unit:
    text: str
    fact_type: str
    context: str
    tags: list[str]
    metadata: dict[str, Any]
    mentioned_at: str | None
    occurred_start: str | None
    occurred_end: str | None
    created_at: str
    updated_at: str
    feedback: int = 0
    edited_at: str | None = None
    archived: ArchivedUnit | None = None
    chunk_index: int | None = None
    entities: list[str] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


def _instant(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _stamp(value: datetime | None, default: str) -> str:
    return default if value is None else value.astimezone(UTC).isoformat(timespec="microseconds")


def _units(document: Document, block: LedgerBlock | None, ts: str) -> tuple[list[_Unit], int]:
    """The document's memories as the store keeps them (its facts, then its archived ones), and
    how many facts of other types (observations) were left out."""
    extras: dict[str, list[archive.FactExtra]] = {}
    for kept in block.facts if block else ():
        extras.setdefault(kept.text_sha256, []).append(kept)
    units: list[_Unit] = []
    left_out = 0
    for fact in document.facts:
        if fact.fact_type not in KEPT_TYPES:
            left_out += 1
            continue
        matched = extras.get(archive.sha256(fact.text.encode()))
        extra: archive.FactExtra | None = matched.pop(0) if matched else None
        units.append(
            _Unit(
                text=fact.text,
                fact_type=fact.fact_type,
                context=fact.context or "",
                tags=sorted(set(fact.tags)),
                metadata=dict(fact.metadata),
                mentioned_at=_instant(fact.mentioned_at),
                occurred_start=_instant(fact.occurred_start),
                occurred_end=_instant(fact.occurred_end),
                created_at=_stamp(fact.created_at, ts),
                updated_at=ts,
                feedback=extra.feedback if extra else 0,
                edited_at=extra.edited_at if extra else None,
                chunk_index=fact.chunk_index,
                entities=fact.entities,
            )
        )
    for gone in block.archived_units if block else ():
        units.append(
            _Unit(
                text=gone.text,
                fact_type=gone.fact_type,
                context=gone.context,
                tags=sorted(set(gone.tags)),
                metadata=gone.metadata,
                mentioned_at=gone.mentioned_at,
                occurred_start=gone.occurred_start,
                occurred_end=gone.occurred_end,
                created_at=gone.created_at,
                updated_at=gone.updated_at,
                feedback=gone.feedback,
                edited_at=gone.edited_at,
                archived=gone,
            )
        )
    return units, left_out


def _exists(db: sqlite3.Connection, bank: str) -> bool:
    return db.execute("SELECT 1 FROM store_banks WHERE bank_id = ?", (bank,)).fetchone() is not None


def _already_exists(target: str) -> StoreError:
    return StoreError(
        400,
        f"Target bank '{target}' already exists; a bank restore writes into a fresh bank (it is not a merge)."
        " Delete it first, or choose a different target bank id.",
    )


async def check(ledger: Database, req: ImportRequest, arc: Archive) -> dict[str, Any] | None:
    """Refuse, as Hindsight does and before any work, what cannot be imported; the bank's fields
    to restore (restore mode with the bank's config), else None."""
    fields = None
    if req.mode == "restore":
        if arc.manifest.archive_type != "bank":
            raise StoreError(
                400,
                f"Not a whole-bank archive (archive_type={arc.manifest.archive_type!r}); use import_documents instead",
            )
        if await ledger.read(lambda db: _exists(db, req.target)):
            raise _already_exists(req.target)
        obey(rules.check_new_bank_id, req.target)
        if not await ledger.read(lambda db: _exists(db, req.bank)):
            raise bank_not_found(req.bank)
        if req.scope.bank_config and arc.bank_row is not None:
            fields = bank_fields(arc.bank_row)
    return fields


async def import_archive(
    ledger: Database,
    embedder: Embedder,
    indexes: IndexCache,
    feedback: Feedback,
    req: ImportRequest,
    arc: Archive,
) -> str:
    """Import ``arc`` as ``req`` says (see the module); the id of the finished operation."""
    fields = await check(ledger, req, arc)
    documents = arc.documents if req.mode == "merge" or req.scope.data else []
    ts = now()
    planned = [(d, *_units(d, arc.blocks.get(d.id), ts)) for d in documents]
    texts = [u.text for _, units, _ in planned for u in units]
    vectors = await asyncio.to_thread(embedder.passages, texts) if texts else np.zeros((0, embedder.dim), np.float32)
    operation_id = str(uuid.uuid4())
    target, name = req.target, embedder.name

    def write(db: sqlite3.Connection) -> _Written:
        if req.mode == "restore":
            if _exists(db, target):
                raise _already_exists(target)
            ensure_bank(db, target, ts)
            if fields is not None:
                _restore_bank_row(db, target, fields)
        else:
            ensure_bank(db, target, ts)
        held_by = db.execute("SELECT embedder FROM store_banks WHERE bank_id = ?", (target,)).fetchone()["embedder"]
        if texts and held_by and held_by != name:
            raise StoreError(
                409,
                f"Bank '{target}' holds vectors of the embedder {held_by!r}, not {name!r}: re-embed it before importing",
            )
        done = _write_documents(db, req, arc, planned, vectors, name, ts)
        rows = done.rows + [r.model_dump() for r in arc.carried]
        # The bank's own rows, imported again, are not doubled; the rows of a document imported
        # as a copy (new-id) are memories of their own (new ids where theirs are taken).
        held = taken_ids(db, [r["id"] for r in rows], bank=target)
        fresh = [r for r in rows if r["id"] not in held] + done.copies
        retired = retire_document_rows(db, target, done.replaced_documents, operation_id=operation_id, keep=held)
        renamed = restore_rows(db, target, fresh, operation_id=operation_id, source_bank=arc.manifest.source_bank_id)
        db.execute(
            "UPDATE store_banks SET embedder = COALESCE(embedder, ?), last_write_at = ?,"
            " last_document_at = COALESCE(?, last_document_at), updated_at = ? WHERE bank_id = ?",
            (name if texts else None, ts, ts if done.written else None, ts, target),
        )
        result = _result(req, arc, done)
        result["memwarden"] = {
            "memories_imported": len(fresh),
            "memories_renamed": len(renamed),
            "memories_already_held": len(held),
            "memories_superseded": len(retired),
            "archived_facts_imported": done.archived,
            "facts_of_other_types_left_out": done.left_out,
            "not_restored": arc.not_restored,
            "archive_sha256": arc.sha256,
            "checked": arc.checked,
        }
        record(db, operation_id=operation_id, bank=req.bank, kind=req.kind, items=done.written, result=result)
        after = {
            "operation_id": operation_id,
            "mode": req.mode,
            "from_bank": arc.manifest.source_bank_id,
            "documents_imported": done.written,
            "documents_skipped": len(done.skipped),
            "facts_imported": done.facts,
            **result["memwarden"],
        }
        reason = f"import of an archive of bank '{arc.manifest.source_bank_id}' ({req.mode})"
        append_events(db, [AuditEvent(action="import", bank=target, source="transfer", reason=reason, after=after)])
        return done

    done = await ledger.write(write)
    if done.new_ids or done.replaced_units:
        vecs = vectors[done.positions]
        await indexes.replace(target, done.replaced_units, done.new_ids, vecs, done.seqs, done.costs)
    feedback.forget(target)
    return operation_id


@dataclass
class _Written:
    """What the documents' writing did, for the ledger's rows, the answer and the vector index."""

    written: int = 0
    facts: int = 0
    archived: int = 0
    left_out: int = 0
    skipped: list[str] = field(default_factory=list)
    remapped: dict[str, str] = field(default_factory=dict)
    replaced_documents: list[str] = field(default_factory=list)
    replaced_units: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # the ledger rows of the documents written
    copies: list[dict[str, Any]] = field(default_factory=list)  # … of the documents written under new ids
    new_ids: list[str] = field(default_factory=list)  # the valid facts written: ids, rows, costs, vectors
    seqs: list[int] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)


def _restore_bank_row(db: sqlite3.Connection, bank: str, fields: Mapping[str, Any]) -> None:
    db.execute(
        "UPDATE store_banks SET name = ?, mission = ?, background = ?, disposition = ?, overrides = ? WHERE bank_id = ?",
        (
            fields["name"],
            fields["mission"],
            fields["background"],
            json.dumps(fields["disposition"]),
            json.dumps(fields["overrides"], ensure_ascii=False),
            bank,
        ),
    )


def _write_documents(
    db: sqlite3.Connection,
    req: ImportRequest,
    arc: Archive,
    planned: Sequence[tuple[Document, list[_Unit], int]],
    vectors: Any,
    embedder: str,
    ts: str,
) -> _Written:
    """Each planned document and its memories, as ``req.conflict`` says for an id the bank holds."""
    target, done = req.target, _Written()
    present = {r[0] for r in db.execute("SELECT id FROM store_documents WHERE bank_id = ?", (target,))}
    position = 0
    for document, units, others in planned:
        final = document.id
        if document.id in present:
            if req.conflict == "skip":
                done.skipped.append(document.id)
                position += len(units)
                continue
            if req.conflict == "new-id":
                final = done.remapped[document.id] = str(uuid.uuid4())
            else:
                done.replaced_units += [
                    r[0]
                    for r in db.execute(
                        "SELECT id FROM store_units WHERE bank_id = ? AND document_id = ?", (target, final)
                    )
                ]
                db.execute("DELETE FROM store_units WHERE bank_id = ? AND document_id = ?", (target, final))
                done.replaced_documents.append(final)
        present.add(final)
        chunks = _write_document(db, target, final, document, ts)
        for unit in units:
            cost = token_estimate(unit.text)
            chunk = chunks.get(unit.chunk_index) if unit.chunk_index is not None else None
            seq = _write_unit(db, target, final, unit, vectors[position], embedder, cost, chunk)
            if unit.archived is None:
                done.new_ids.append(unit.id)
                done.positions.append(position)
                done.costs.append(cost)
                done.seqs.append(seq)
                done.facts += 1
            else:
                done.archived += 1
            position += 1
        done.written += 1
        done.left_out += others
        block = arc.blocks.get(document.id)
        if block is not None:
            (done.copies if final != document.id else done.rows).extend(_rows_for(block, final))
    return done


def _rows_for(block: LedgerBlock, document_id: str) -> list[dict[str, Any]]:
    """The block's rows, pointing at the document as imported (its id may have changed: a
    ``new-id`` import here or in Hindsight)."""
    rows = []
    for row in block.memories:
        record_ = row.model_dump()
        if record_["document_id"] == block.document_id != document_id:
            record_["document_id"] = document_id
            item = json.loads(record_["item"])
            if item.get("document_id") == block.document_id:
                record_["item"] = json.dumps({**item, "document_id": document_id}, ensure_ascii=False)
        rows.append(record_)
    return rows


def _write_document(db: sqlite3.Connection, bank: str, document_id: str, document: Document, ts: str) -> dict[int, str]:
    """The document's row and its chunks (those it held before replaced); the chunks' ids by index."""
    text = document.original_text or ""
    params = {k: v for k, v in (document.retain_params or {}).items() if k != archive.LEDGER_KEY}
    metadata = params.get("metadata") if isinstance(params.get("metadata"), dict) else None
    db.execute(
        "INSERT INTO store_documents (bank_id, id, original_text, content_hash, tags, metadata, retain_params,"
        " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (bank_id, id) DO UPDATE SET"
        " original_text = excluded.original_text, content_hash = excluded.content_hash, tags = excluded.tags,"
        " metadata = excluded.metadata, retain_params = excluded.retain_params, created_at = excluded.created_at,"
        " updated_at = excluded.updated_at",
        (
            bank,
            document_id,
            text,
            hashlib.sha256(text.encode()).hexdigest(),
            json.dumps(sorted(set(document.tags)), ensure_ascii=False),
            json.dumps(metadata, ensure_ascii=False) if metadata else None,
            json.dumps(params, ensure_ascii=False) if params else None,
            _stamp(document.created_at, ts),
            ts,
        ),
    )
    db.execute("DELETE FROM store_chunks WHERE bank_id = ? AND document_id = ?", (bank, document_id))
    attachments.delete(db, bank, document_id)  # an archive carries none (attachments_imported: 0)
    ids: dict[int, str] = {}
    for chunk in document.chunks:
        if chunk.chunk_index in ids:
            continue  # an index given twice: the first chunk holds it
        ids[chunk.chunk_index] = f"{bank}_{document_id}_{chunk.chunk_index}"  # Hindsight's chunk id
        db.execute(
            "INSERT INTO store_chunks (bank_id, document_id, chunk_index, chunk_id, text, created_at)"
            " VALUES (?,?,?,?,?,?)",
            (bank, document_id, chunk.chunk_index, ids[chunk.chunk_index], chunk.chunk_text, ts),
        )
    return ids


def _write_unit(
    db: sqlite3.Connection,
    bank: str,
    document_id: str,
    unit: _Unit,
    vector: Any,
    embedder: str,
    cost: int,
    chunk_id: str | None,
) -> int:
    gone = unit.archived
    column, mark, pg_vector = pg_vectors.value(db, vector)
    db.execute(
        "INSERT INTO store_units (id, bank_id, document_id, text, terms, term_count, context, fact_type, tags,"  # noqa: S608 - the vector column: pg_vectors.value
        " metadata, mentioned_at, occurred_start, occurred_end, state, invalidation_reason, invalidated_at,"
        f" edited_at, created_at, updated_at, embedder, embedding, tokens, feedback, chunk_id, entities{column})"
        f" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?{mark})",
        (
            unit.id,
            bank,
            document_id,
            unit.text,
            *index_text(unit.text, bank),
            unit.context,
            unit.fact_type,
            json.dumps(unit.tags, ensure_ascii=False),
            json.dumps(unit.metadata, ensure_ascii=False),
            unit.mentioned_at,
            unit.occurred_start,
            unit.occurred_end,
            "valid" if gone is None else "invalidated",
            gone.invalidation_reason if gone else None,
            gone.invalidated_at if gone else None,
            unit.edited_at,
            unit.created_at,
            unit.updated_at,
            embedder,
            np.asarray(vector, dtype=np.float32).tobytes(),
            cost,
            unit.feedback,
            chunk_id,
            entities.encode(unit.entities),
            *pg_vector,
        ),
    )
    return int(db.execute("SELECT seq FROM store_units WHERE id = ?", (unit.id,)).fetchone()[0])


def _result(req: ImportRequest, arc: Archive, done: _Written) -> dict[str, Any]:
    """Hindsight's ``result_metadata`` of the import, by mode (what memwarden has none of: 0)."""
    if req.mode == "merge":
        return {
            "facts_imported": done.facts,
            "documents_skipped": len(done.skipped),
            "documents_imported": done.written,
            "observations_skipped": arc.not_restored.get("observations", 0),
            "skipped_document_ids": list(done.skipped),
            "observations_imported": 0,
            "remapped_document_ids": dict(done.remapped),
            "mental_models_imported": 0,
            "knowledge_pages_imported": 0,
        }
    return {
        "facts_imported": done.facts,
        "target_bank_id": req.target,
        "restored_bank_id": req.target,
        "webhooks_imported": 0,
        "documents_imported": done.written,
        "directives_imported": 0,
        "operations_imported": 0,
        "attachments_imported": 0,
        "history_rows_imported": 0,
        "observations_imported": 0,
        "mental_models_imported": 0,
        "knowledge_pages_imported": 0,
        "invalidated_memories_imported": 0,
        "mental_model_history_imported": 0,
        "maintenance_queue_rows_imported": 0,
    }
