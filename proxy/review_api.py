"""The review queue: items held because they conflict with the memory holding their topic key.

* ``GET  /warden/v1/banks/{bank}/review`` — the held items, each beside the memory it conflicts with;
* ``POST /warden/v1/banks/{bank}/review/{id}/approve`` — forward the held item to the backend; it
  becomes active and the memory it conflicted with is superseded;
* ``POST /warden/v1/banks/{bank}/review/{id}/reject`` — drop it (kept in the ledger as ``rejected``).

Superseding removes the old memory from the backend only when memwarden created its document and
nothing else lives in it (its ``mw-`` document id); the ledger keeps its content either way.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendError, BackendRejected
from memwarden.db.memories import move, review_queue, row_by_id
from memwarden.fronts.asgi import send_json
from memwarden.proxy.memories import Refused, answer
from memwarden.proxy.middleware import request_id_of
from memwarden.proxy.state import AppState


async def list_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]

    await send_json(send, 200, {"bank_id": bank, "items": await state.ledger.read(lambda db: review_queue(db, bank))})


async def _held(state: AppState, bank: str, memory_id: str) -> sqlite3.Row | None:
    return await state.ledger.read(lambda db: row_by_id(db, memory_id, bank=bank))


async def _held_for_review(state: AppState, bank: str, memory_id: str) -> sqlite3.Row:
    """The held row; :class:`Refused` 404 (unknown) / 409 (not held)."""
    row = await _held(state, bank, memory_id)
    if row is None:
        raise Refused(404, f"no memory {memory_id} in bank '{bank}'")
    if row["status"] != "review":
        raise Refused(409, f"memory {memory_id} is {row['status']}, not held for review")
    return row


async def supersede_in_backend(state: AppState, bank: str, old: sqlite3.Row | dict[str, Any]) -> str:
    """Remove a superseded memory's document from the backend when that is safe; say what happened."""
    document_id = old["document_id"] or ""
    if not document_id.startswith("mw-"):
        return "kept in the backend (its document is the client's)"
    try:
        await state.memory.delete_document(bank, document_id)
    except BackendRejected as exc:
        if exc.status == 404:
            return "already gone from the backend"
        raise
    return f"document {document_id} removed from the backend"


async def approve(state: AppState, bank: str, memory_id: str, *, request_id: str) -> dict[str, Any]:
    """Forward a held item; it becomes active and supersedes the memory it conflicted with."""
    row = await _held_for_review(state, bank, memory_id)
    item = json.loads(row["item"])
    try:
        await state.memory.retain(bank, {"items": [item], "async": False})
    except BackendError as exc:
        raise Refused(502, f"the backend did not take the approved item: {exc}") from exc
    old = await _held(state, bank, row["conflict_with"]) if row["conflict_with"] else None
    note = ""
    if old is not None and old["status"] == "active":
        try:
            note = await supersede_in_backend(state, bank, old)
        except BackendError as exc:
            note = f"still in the backend: {exc}"

    def record(db: sqlite3.Connection) -> None:
        move(
            db,
            [memory_id],
            bank=bank,
            frm="review",
            to="active",
            action="approve",
            source="review",
            request_id=request_id,
        )
        if old is not None:
            move(
                db,
                [old["id"]],
                bank=bank,
                frm="active",
                to="superseded",
                action="supersede",
                source="review",
                request_id=request_id,
                rule="topic_key.conflict",
                reason=f"superseded by approved {memory_id}; {note}",
                by=memory_id,
            )

    await state.ledger.write(record)
    return {
        "id": memory_id,
        "status": "active",
        "superseded": old["id"] if old is not None else None,
        "backend": note or None,
    }


async def approve_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    await answer(send, approve(state, bank, memory_id, request_id=request_id_of(scope)))


async def reject(state: AppState, bank: str, memory_id: str, *, request_id: str) -> dict[str, Any]:
    """Drop a held item (kept in the ledger as ``rejected``)."""
    await _held_for_review(state, bank, memory_id)

    def record(db: sqlite3.Connection) -> None:
        move(
            db,
            [memory_id],
            bank=bank,
            frm="review",
            to="rejected",
            action="reject_review",
            source="review",
            request_id=request_id,
        )

    await state.ledger.write(record)
    return {"id": memory_id, "status": "rejected"}


async def reject_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    await answer(send, reject(state, bank, memory_id, request_id=request_id_of(scope)))
