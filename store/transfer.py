"""A bank's export: its rows read in one transaction, written as Hindsight's transfer archive
(:mod:`store.archive`), and kept as a finished operation whose archive is downloaded by its key;
and the operation records of exports and imports (:mod:`store.transfer_import`).

Hindsight runs an export in the background and answers ``202`` with an operation to poll; the
store builds the archive before it answers (one read transaction: a consistent bank), so the
operation it answers is already ``completed``, its ``result_metadata`` carrying the
``download_url`` as Hindsight's does. An export is audited (``export``). The archive stays until
its bank is deleted.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import has_table, now, on_postgres
from memwarden.db.database import Database
from memwarden.db.memory_transfer import rows_for_export
from memwarden.store import archive
from memwarden.store.errors import bank_not_found
from memwarden.store.shapes import loads

EXPORT_TYPES = frozenset({"export_bank", "export_documents"})
TRANSFER_TYPES = EXPORT_TYPES | {"import_bank", "import_documents"}
DOWNLOAD_KEY = re.compile(r"^banks/(?P<bank>.+)/exports/(?P<operation>[0-9a-f-]{36})/transfer\.zip$")


@dataclass(frozen=True)
class Dump:
    """A bank's rows, read in one transaction."""

    bank: sqlite3.Row
    documents: list[sqlite3.Row]
    units: dict[str, list[sqlite3.Row]]
    chunks: dict[str, list[sqlite3.Row]]
    ledger: list[dict[str, Any]]


@dataclass(frozen=True)
class Summary:
    documents: int
    facts: int
    archived_facts: int
    memories: int  # ledger rows

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def dump(db: sqlite3.Connection, bank: str, document_ids: Sequence[str] | None = None) -> Dump | None:
    """``bank``'s rows (those of ``document_ids`` only, if given), all of one moment (one read
    transaction); None when the store has no such bank (or the database no store)."""
    began = not db.in_transaction
    if began:  # (PostgreSQL's default, READ COMMITTED, would see each statement's own moment)
        db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ" if on_postgres(db) else "BEGIN")
    try:
        if not has_table(db, "store_banks"):
            return None  # a memwarden that has only ever fronted a backend
        row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        if row is None:
            return None
        wanted = set(document_ids) if document_ids is not None else None
        documents = [
            d
            for d in db.execute("SELECT * FROM store_documents WHERE bank_id = ? ORDER BY created_at, id", (bank,))
            if wanted is None or d["id"] in wanted
        ]
        units: dict[str, list[sqlite3.Row]] = {}
        for unit in db.execute("SELECT * FROM store_units WHERE bank_id = ? ORDER BY seq", (bank,)):
            if wanted is None or unit["document_id"] in wanted:
                units.setdefault(unit["document_id"], []).append(unit)
        chunks: dict[str, list[sqlite3.Row]] = {}
        for chunk in db.execute(
            "SELECT * FROM store_chunks WHERE bank_id = ? ORDER BY document_id, chunk_index", (bank,)
        ):
            if wanted is None or chunk["document_id"] in wanted:
                chunks.setdefault(chunk["document_id"], []).append(chunk)
        return Dump(row, documents, units, chunks, rows_for_export(db, bank))
    finally:
        if began:
            db.execute("COMMIT")


def bank_row(row: sqlite3.Row) -> dict[str, Any]:
    """The bank as Hindsight's ``banks.json`` holds it (JSON columns serialized, as Hindsight writes
    them); ``background``, which Hindsight 1.1.0 no longer has, is ignored by it."""
    return {
        "bank_id": row["bank_id"],
        "name": row["name"] or row["bank_id"],
        "disposition": row["disposition"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "mission": row["mission"],
        "last_consolidated_at": None,
        "mission_changed_at": None,
        "config": row["overrides"],
        "background": row["background"],
    }


def _fact(unit: sqlite3.Row, chunk_index: int | None) -> archive.Fact:
    return archive.Fact.model_validate(
        {
            "text": unit["text"],
            "fact_type": unit["fact_type"],
            "context": unit["context"],
            "event_date": unit["mentioned_at"] or unit["created_at"],
            "occurred_start": unit["occurred_start"],
            "occurred_end": unit["occurred_end"],
            "mentioned_at": unit["mentioned_at"],
            "metadata": {
                str(k): v if isinstance(v, str) else json.dumps(v) for k, v in loads(unit["metadata"], {}).items()
            },
            "tags": loads(unit["tags"], []),
            "chunk_index": chunk_index,
            "entities": list(loads(unit["entities"], {}).values()),
            "created_at": unit["created_at"],
        }
    )


def _archived(unit: sqlite3.Row) -> dict[str, Any]:
    keys = ("text", "context", "fact_type", "mentioned_at", "occurred_start", "occurred_end")
    more = ("invalidation_reason", "invalidated_at", "edited_at", "created_at", "updated_at", "feedback")
    return {
        **{k: unit[k] for k in keys + more},
        "tags": loads(unit["tags"], []),
        "metadata": loads(unit["metadata"], {}),
    }


def document_of(
    row: sqlite3.Row,
    units: Sequence[sqlite3.Row],
    rows: Sequence[Mapping[str, Any]],
    chunks: Sequence[sqlite3.Row] = (),
) -> archive.Document:
    """A stored document as a ``TransferDocument``: its chunks (each retained item's text; a
    document stored before chunks were kept: its whole text as chunk 0), its valid facts as facts
    with their chunk's index and their entities, the rest (ledger rows, archived facts, feedback)
    in its ledger block."""
    text = row["original_text"] or ""
    parts = [{"chunk_index": c["chunk_index"], "chunk_text": c["text"]} for c in chunks]
    if not parts and text:
        parts = [{"chunk_index": 0, "chunk_text": text}]
    index_of = {c["chunk_id"]: c["chunk_index"] for c in chunks}
    default = 0 if parts and not chunks else None
    valid = [u for u in units if u["state"] == "valid"]
    extras = [
        {"text_sha256": archive.sha256(u["text"].encode()), "feedback": u["feedback"], "edited_at": u["edited_at"]}
        for u in valid
        if u["feedback"] or u["edited_at"]
    ]
    archived = [_archived(u) for u in units if u["state"] != "valid"]
    params = loads(row["retain_params"], None) or {}
    if rows or extras or archived:
        params[archive.LEDGER_KEY] = archive.ledger_block(row["id"], rows, facts=extras, archived_units=archived)
    return archive.Document.model_validate(
        {
            "id": row["id"],
            "original_text": text,
            "retain_params": params or None,
            "tags": loads(row["tags"], []),
            "created_at": row["created_at"],
            "chunks": parts,
            "facts": [_fact(u, index_of.get(u["chunk_id"], default)) for u in valid],
        }
    )


def carrier(rows: Sequence[Mapping[str, Any]], taken: set[str]) -> archive.Document:
    """The document that carries the ledger rows of no document the bank holds: no text, no facts."""
    document_id = (
        archive.CARRIER_ID if archive.CARRIER_ID not in taken else f"{archive.CARRIER_ID}-{uuid.uuid4().hex[:8]}"
    )
    block = archive.ledger_block(document_id, rows, carrier=True)
    return archive.Document(id=document_id, original_text="", retain_params={archive.LEDGER_KEY: block})


def archive_of(
    d: Dump,
    *,
    archive_type: Literal["documents", "bank"],
    scope: archive.Scope,
    whole_bank: bool,
    version: str,
) -> tuple[bytes, Summary]:
    """The archive of dump ``d``: with ``whole_bank``, every ledger row (those of no document in
    the carrier); else the rows of its documents only."""
    bank = d.bank["bank_id"]
    documents: list[archive.Document] = []
    memories = facts = archived = 0
    if scope.data:
        by_document: dict[str | None, list[dict[str, Any]]] = {}
        for r in d.ledger:
            by_document.setdefault(r["document_id"], []).append(r)
        held = {row["id"] for row in d.documents}
        for row in d.documents:
            units = d.units.get(row["id"], [])
            rows = by_document.get(row["id"], [])
            documents.append(document_of(row, units, rows, d.chunks.get(row["id"], [])))
            memories += len(rows)
            facts += sum(u["state"] == "valid" for u in units)
            archived += sum(u["state"] != "valid" for u in units)
        orphans = [r for r in d.ledger if r["document_id"] not in held]
        if whole_bank and orphans:
            documents.append(carrier(orphans, held))
            memories += len(orphans)
    data = archive.build(
        source_bank=bank,
        documents=documents,
        bank_row=bank_row(d.bank),
        scope=scope,
        archive_type=archive_type,
        exported_at=now(),
        memwarden_version=version,
    )
    return data, Summary(len(documents), facts, archived, memories)


def record(
    db: sqlite3.Connection,
    *,
    operation_id: str,
    bank: str,
    kind: str,
    items: int,
    result: Mapping[str, Any],
    archive_bytes: bytes | None = None,
    storage_key: str | None = None,
) -> None:
    """A finished transfer as an operation of ``bank`` (``GET …/operations/{id}`` answers it)."""
    ts = now()
    db.execute(
        "INSERT INTO store_operations (id, bank_id, type, status, items_count, payload, created_at, updated_at,"
        " completed_at) VALUES (?, ?, ?, 'completed', ?, NULL, ?, ?, ?)",
        (operation_id, bank, kind, items, ts, ts, ts),
    )
    db.execute(
        "INSERT INTO store_transfers (operation_id, bank_id, storage_key, archive, result_metadata, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (operation_id, bank, storage_key, archive_bytes, json.dumps(result, ensure_ascii=False), ts),
    )


async def export(
    ledger: Database,
    bank: str,
    *,
    archive_type: Literal["documents", "bank"],
    scope: archive.Scope,
    document_ids: Sequence[str] | None,
    version: str,
) -> str:
    """Export ``bank`` (or ``document_ids`` of it); the id of the finished operation."""
    d = await ledger.read(lambda db: dump(db, bank, document_ids))
    if d is None:
        raise bank_not_found(bank)
    data, summary = archive_of(
        d, archive_type=archive_type, scope=scope, whole_bank=document_ids is None, version=version
    )
    operation_id = str(uuid.uuid4())
    key = f"banks/{quote(bank, safe='')}/exports/{operation_id}/transfer.zip"
    digest = archive.sha256(data)
    result = {
        "filename": f"{bank}-{'bank' if archive_type == 'bank' else 'documents'}.zip",
        "byte_size": len(data),
        "storage_key": key,
        "download_url": f"/v1/default/files/download/{key}",
        "memwarden": {"sha256": digest, **summary.as_dict()},
    }
    kind = "export_bank" if archive_type == "bank" else "export_documents"

    def write(db: sqlite3.Connection) -> None:
        if db.execute("SELECT 1 FROM store_banks WHERE bank_id = ?", (bank,)).fetchone() is None:
            raise bank_not_found(bank)  # deleted while the archive was written
        record(
            db,
            operation_id=operation_id,
            bank=bank,
            kind=kind,
            items=summary.documents,
            result=result,
            archive_bytes=data,
            storage_key=key,
        )
        after = {"operation_id": operation_id, "archive_type": archive_type, "sha256": digest, **summary.as_dict()}
        append_events(db, [AuditEvent(action="export", bank=bank, source="transfer", after=after)])

    await ledger.write(write)
    return operation_id


async def result_metadata(ledger: Database, operation_id: str) -> dict[str, Any] | None:
    row = await ledger.read(
        lambda db: db.execute(
            "SELECT result_metadata FROM store_transfers WHERE operation_id = ?", (operation_id,)
        ).fetchone()
    )
    return None if row is None else dict(json.loads(row[0]))


async def download(ledger: Database, key: str) -> tuple[str, bytes] | None:
    """The archive stored under ``key`` (as its path names it, decoded), and its bank; None if none."""
    found = DOWNLOAD_KEY.match(key)
    if found is None:
        return None
    row = await ledger.read(
        lambda db: db.execute(
            "SELECT bank_id, archive FROM store_transfers WHERE operation_id = ? AND archive IS NOT NULL",
            (found["operation"],),
        ).fetchone()
    )
    if row is None or row["bank_id"] != found["bank"]:
        return None
    return row["bank_id"], bytes(row["archive"])
