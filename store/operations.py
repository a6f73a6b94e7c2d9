"""Async retains: acknowledged once their payload is committed (a row of ``store_operations``),
worked off in the background, and resumed at start when a previous process stopped before
finishing them; listed, and read back as the history of the documents they wrote (Hindsight
rebuilds a document's history from its async operations: a synchronous retain is not in it).

The store runs an async retain as one operation (``batch_retain``, the id the retain answered);
Hindsight runs it as a parent ``batch_retain`` with ``retain`` children. The store's have no
children, so ``exclude_parents`` leaves them in the list."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog

from memwarden.db.common import chunked, now
from memwarden.db.database import Database
from memwarden.db.instances import live_ids
from memwarden.store import rules
from memwarden.store.banks import ensure_bank, require_bank
from memwarden.store.errors import obey
from memwarden.store.writes import DocumentWrite, RetainItem, dequeued

log = structlog.get_logger("memwarden.store")
# What works off an operation: the store's retain (bank, items, document tags).
Retain = Callable[[str, Sequence[RetainItem], Sequence[str]], Awaitable[list[DocumentWrite]]]
NO_OBSERVATIONS = {"count": 0, "ids": []}


class Operations:
    def __init__(self, ledger: Database, retain: Retain) -> None:
        self.ledger = ledger
        self._retain = retain
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, bank: str, payload: dict[str, Any], items_count: int) -> str:
        operation_id = str(uuid.uuid4())

        def write(db: sqlite3.Connection) -> None:
            ts = now()
            ensure_bank(db, bank, ts)
            db.execute(
                "INSERT INTO store_operations (id, bank_id, type, status, items_count, payload, created_at, updated_at,"
                " instance) VALUES (?, ?, 'batch_retain', 'pending', ?, ?, ?, ?, ?)",
                (
                    operation_id,
                    bank,
                    items_count,
                    json.dumps(payload, ensure_ascii=False),
                    ts,
                    ts,
                    self.ledger.instance_id,
                ),
            )

        await self.ledger.write(write)
        self._spawn(self._run(operation_id))
        return operation_id

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def held_documents(self, bank: str, document_ids: Sequence[str]) -> set[str]:
        """Which of ``document_ids`` the store holds in ``bank``: written, or in an async retain it
        acknowledged and has not finished yet."""
        wanted = set(document_ids)

        def read(db: sqlite3.Connection) -> set[str]:
            held: set[str] = set()
            for chunk in chunked(sorted(wanted)):
                marks = ",".join("?" * len(chunk))
                held.update(
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM store_documents WHERE bank_id = ? AND id IN ({marks})",  # noqa: S608
                        (bank, *chunk),
                    )
                )
            for (payload,) in db.execute(
                "SELECT payload FROM store_operations WHERE bank_id = ? AND status = 'pending'", (bank,)
            ):
                held.update(
                    i.get("document_id") for i in json.loads(payload)["items"] if i.get("document_id") in wanted
                )
            return held

        return await self.ledger.read(read) if wanted else set()

    async def resume(self) -> int:
        """Work off the async retains a stopped process acknowledged but did not finish — at start,
        and on a shared database when another instance is found dead. Each is claimed first (under
        the write lock: one instance runs it); a live instance's are its own, never touched."""
        me = self.ledger.instance_id

        def claim(db: sqlite3.Connection) -> list[str]:
            orphaned = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM store_operations WHERE status = 'pending'"  # noqa: S608
                    f" AND (instance IS NULL OR instance NOT IN ({live_ids(db)})) ORDER BY created_at"
                )
            ]
            for operation_id in orphaned:
                db.execute("UPDATE store_operations SET instance = ? WHERE id = ?", (me, operation_id))
            return orphaned

        pending = await self.ledger.write(claim)
        for operation_id in pending:
            self._spawn(self._run(operation_id))
        return len(pending)

    async def _run(self, operation_id: str) -> None:
        row = await self.ledger.read(
            lambda db: db.execute("SELECT * FROM store_operations WHERE id = ?", (operation_id,)).fetchone()
        )
        if row is None or row["status"] != "pending":
            return
        payload = json.loads(row["payload"])
        status, error, written = "completed", None, []
        try:
            written = await self._retain(
                row["bank_id"], [dequeued(i) for i in payload["items"]], payload.get("document_tags") or []
            )
        except Exception as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            log.error("async_retain_failed", operation_id=operation_id, error=error)
        ts = now()
        events = [{"document_id": w.document_id, "added": w.added, "removed": w.removed, "at": ts} for w in written]
        # A failed operation keeps its payload: nothing acknowledged is dropped, and it can be retried.
        await self.ledger.write(
            lambda db: db.execute(
                "UPDATE store_operations SET status = ?, error_message = ?, updated_at = ?, completed_at = ?,"
                " payload = CASE WHEN ? = 'completed' THEN NULL ELSE payload END, events = ? WHERE id = ?",
                (
                    status,
                    error,
                    ts,
                    ts,
                    status,
                    json.dumps(events, ensure_ascii=False) if events else None,
                    operation_id,
                ),
            )
        )

    async def drain(self, grace: float = 10.0) -> None:
        """Let async retains finish within ``grace`` seconds; cancel the rest and wait until they
        have stopped (their operations stay ``pending`` with their payload: ``resume`` runs them
        at the next start), so that the database is closed after their last write."""
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def status(self, bank: str, operation_id: str) -> dict[str, Any]:
        """An async retain's status. As in Hindsight, an id that is not a UUID is a ``400`` and an
        unknown one is answered with ``status: not_found`` (the bank is not looked up)."""
        obey(rules.check_operation_id, operation_id)
        row = await self.ledger.read(
            lambda db: db.execute(
                "SELECT * FROM store_operations WHERE bank_id = ? AND id = ?", (bank, operation_id)
            ).fetchone()
        )
        found = row is not None
        return {
            "operation_id": operation_id,
            "status": row["status"] if found else "not_found",
            "operation_type": row["type"] if found else None,
            "id": operation_id,
            "task_type": row["type"] if found else None,
            "mental_model_id": None,
            "created_at": row["created_at"] if found else None,
            "updated_at": row["updated_at"] if found else None,
            "completed_at": row["completed_at"] if found else None,
            "error_message": row["error_message"] if found else None,
            "retry_count": 0 if found else None,
            "next_retry_at": None,
            "progress": None,
            "result_metadata": None,
            "details": None,
            "child_operations": None,
            "task_payload": None,
        }

    async def list_operations(self, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """``GET …/operations``: the bank's operations, newest first, filtered by ``status`` and
        ``type`` (exact, unchecked, as Hindsight filters) and paged."""
        await require_bank(self.ledger, bank)
        where, args = ["bank_id = ?"], [bank]
        for column, name in (("status", "status"), ("type", "type")):
            if params.get(name):
                where.append(f"{column} = ?")
                args.append(params[name])
        clause = " AND ".join(where)
        limit, offset = int(params.get("limit", 20)), int(params.get("offset", 0))

        def read(db: sqlite3.Connection) -> tuple[int, list[sqlite3.Row]]:
            total = db.execute(f"SELECT COUNT(*) FROM store_operations WHERE {clause}", args).fetchone()[0]  # noqa: S608
            rows = db.execute(
                f"SELECT * FROM store_operations WHERE {clause} ORDER BY created_at DESC, id LIMIT ? OFFSET ?",  # noqa: S608
                (*args, limit, offset),
            ).fetchall()
            return int(total), rows

        total, rows = await self.ledger.read(read)
        return {
            "bank_id": bank,
            "total": total,
            "limit": limit,
            "offset": offset,
            "operations": [_listed(r) for r in rows],
        }

    async def document_history(self, bank: str, document_id: str, limit: int, offset: int) -> dict[str, Any]:
        """``GET …/documents/{id}/history``: what each finished async retain did to the document,
        newest first (``total``, ``limit`` and ``offset`` count operations). As in Hindsight the
        bank and the document are not looked up: an unknown one has an empty history."""

        def read(db: sqlite3.Connection) -> list[sqlite3.Row]:
            rows: list[sqlite3.Row] = db.execute(
                "SELECT o.id, o.events FROM store_operations o WHERE o.bank_id = ? AND o.events IS NOT NULL AND"
                " EXISTS (SELECT 1 FROM json_each(o.events) e WHERE json_extract(e.value, '$.document_id') = ?)"
                " ORDER BY o.completed_at DESC, o.id",
                (bank, document_id),
            ).fetchall()
            return rows

        rows = await self.ledger.read(read)
        items = [
            {
                "document_id": document_id,
                "kind": "retain",
                "created_at": event["at"],
                "operation_id": row["id"],
                "fact_id": None,
                "facts_added": event["added"],
                "facts_removed": event["removed"],
                "observations_created": NO_OBSERVATIONS,
                "observations_updated": NO_OBSERVATIONS,
                "observations_removed": NO_OBSERVATIONS,
            }
            for row in rows[offset : offset + limit]
            for event in json.loads(row["events"])
            if event["document_id"] == document_id
        ]
        return {"document_id": document_id, "total": len(rows), "limit": limit, "offset": offset, "items": items}


def _listed(row: sqlite3.Row) -> dict[str, Any]:
    """Hindsight's ``OperationResponse`` (an item of the operations list)."""
    return {
        "id": row["id"],
        "task_type": row["type"],
        "operation_id": row["id"],
        "operation_type": row["type"],
        "items_count": row["items_count"],
        "document_id": None,
        "filename": None,
        "mental_model_id": None,
        "details": None,
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "status": row["status"],
        "error_message": row["error_message"],
        "retry_count": 0,
        "next_retry_at": None,
        "progress": None,
    }
