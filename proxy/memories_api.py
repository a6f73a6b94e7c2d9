"""Memories as an operator sees them (SPEC §7): list and filter the ledger, one memory with its
event timeline, archive and restore, feedback.

* ``GET  /warden/v1/banks/{bank}/memories?status=&topic=&stage=&tag=&topic_key=&q=&limit=&offset=``
* ``GET  /warden/v1/banks/{bank}/memories/{id}`` — the row, its audit events, its feedback score;
* ``POST …/memories/{id}/archive`` ``{"reason": …}`` — out of the backend, kept in the ledger;
* ``POST …/memories/{id}/restore`` — back in the backend;
* ``POST …/memories/{id}/feedback`` ``{"score": 1 | -1, "reason": …}`` — stored and audited.

Archive works on the memory's backend document: Hindsight keeps no link from a retained item to the
facts it extracted, but every fact carries the item's document id (memwarden gives one to items
that have none). Archiving invalidates the document's facts (``PATCH …/memories/{unit}``
``state: invalidated`` — soft in Hindsight and in the self-hosted store alike), so recall stops
returning them, and moves the ledger row to ``archived``. A memory sharing its document with other
active memories is refused (409): invalidating the document would take them too. Restore
re-validates those facts; when they are gone (the document was deleted since), it retains the
memory again from the ledger, with its document id. A backend failure midway is undone where it
can be and reported exactly; the ledger changes only once the backend has.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendError, BackendRejected
from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.memories import (
    FilterError,
    active_siblings,
    list_memories,
    memory_account,
    memory_row,
    move,
)
from memwarden.fronts.asgi import read_object, send_json
from memwarden.proxy.memories import Refused
from memwarden.proxy.middleware import request_id_of
from memwarden.proxy.state import AppState

CURATABLE = ("world", "experience")  # Hindsight curates only these fact types
UNIT_PAGE = 1000


def _bad(loc: str, msg: str, value: Any) -> dict[str, Any]:
    return {"detail": [{"type": "value_error", "loc": ["query", loc], "msg": msg, "input": value}]}


async def list_ledger_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    try:
        page = await state.ledger.read(lambda db: list_memories(db, bank, query))
    except FilterError as exc:
        await send_json(send, 422, _bad(exc.loc, str(exc), exc.value))
        return
    await send_json(send, 200, page)


async def _memory_or_404(state: AppState, bank: str, memory_id: str, send: Send) -> sqlite3.Row | None:
    row = await state.ledger.read(lambda db: memory_row(db, bank, memory_id))
    if row is None:
        await send_json(send, 404, {"detail": f"Memory '{memory_id}' not found in bank '{bank}'"})
    return row


async def memory_detail(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    view = await state.ledger.read(lambda db: memory_account(db, bank, memory_id))
    if view is None:
        await send_json(send, 404, {"detail": f"Memory '{memory_id}' not found in bank '{bank}'"})
        return
    await send_json(send, 200, view)


async def _body_object(receive: Receive, send: Send) -> dict[str, Any] | None:
    payload = await read_object(receive, send)
    if payload is None:
        return None
    reason = payload.get("reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > 2000):
        await send_json(
            send,
            422,
            {
                "detail": [
                    {"type": "string_type", "loc": ["body", "reason"], "msg": "a string, at most 2000 characters"}
                ]
            },
        )
        return None
    return payload


async def _document_units(state: AppState, bank: str, document_id: str, which: str) -> list[dict[str, Any]]:
    """The backend's curatable facts of one document, ``valid`` or ``invalidated`` ones (Hindsight
    lists one state at a time)."""
    page = await state.memory.list_memories(bank, {"document_id": document_id, "state": which, "limit": UNIT_PAGE})
    items = page.get("items") if isinstance(page, dict) else None
    return [u for u in items or [] if isinstance(u, dict) and u.get("fact_type", "world") in CURATABLE]


class StateChangeFailed(Exception):
    """The backend failed while switching facts; ``stuck`` lists those that could not be switched
    back (empty: everything was undone)."""

    def __init__(self, cause: BackendError, stuck: list[str]) -> None:
        super().__init__(str(cause))
        self.cause, self.stuck = cause, stuck

    def detail(self, what: str, ledger: str) -> str:
        left = f"; {len(self.stuck)} facts could not be switched back: {', '.join(self.stuck)}" if self.stuck else ""
        return f"the backend did not {what} it ({self.cause}); {ledger}{left or ', nothing left half-done'}"


async def _set_state(state: AppState, bank: str, units: list[dict[str, Any]], to: str, reason: str) -> list[str]:
    """Move ``units`` to ``to``; on a failure, move the ones already done back and raise
    :class:`StateChangeFailed` naming any that stayed."""
    done: list[str] = []
    back = "valid" if to == "invalidated" else "invalidated"
    try:
        for unit in units:
            changes: dict[str, Any] = {"state": to}
            if to == "invalidated":
                changes["reason"] = reason
            await state.memory.update_memory(bank, str(unit["id"]), changes)
            done.append(str(unit["id"]))
    except BackendError as exc:
        stuck = []
        for unit_id in done:
            try:
                await state.memory.update_memory(bank, unit_id, {"state": back})
            except BackendError:
                stuck.append(unit_id)
        raise StateChangeFailed(exc, stuck) from exc
    return done


async def _lockedmemory_row(state: AppState, bank: str, memory_id: str, want: str, verb: str) -> sqlite3.Row:
    row = await state.ledger.read(lambda db: memory_row(db, bank, memory_id))
    if row is None:
        raise Refused(404, f"Memory '{memory_id}' not found in bank '{bank}'")
    if row["status"] != want:
        raise Refused(409, f"Memory '{memory_id}' is {row['status']}; only {want} memories can be {verb}")
    return row


async def archive(
    state: AppState,
    bank: str,
    memory_id: str,
    *,
    reason: str,
    request_id: str,
    action: str = "archive",
    source: str = "operator",
    locked: bool = False,
) -> dict[str, Any]:
    """Archive one memory (see the module's doc); the backend's account. Raises :class:`Refused`.
    ``locked``: the caller holds the bank's lock already (plans, retention)."""
    if not locked:
        async with state.bank_locks(bank):
            return await archive(
                state, bank, memory_id, reason=reason, request_id=request_id, action=action, source=source, locked=True
            )
    row = await _lockedmemory_row(state, bank, memory_id, "active", "archived")
    document_id = row["document_id"]
    siblings = await state.ledger.read(lambda db: active_siblings(db, bank, document_id, memory_id))
    if siblings:
        raise Refused(
            409,
            f"Memory '{memory_id}' shares document '{document_id}' with {siblings} other active memories;"
            " archiving it would take theirs too (archive them together with a plan)",
        )
    try:
        units = await _document_units(state, bank, document_id, "valid") if document_id else []
        done = await _set_state(state, bank, units, "invalidated", reason)
    except StateChangeFailed as exc:
        raise Refused(502, exc.detail("archive", "the ledger still says active")) from exc
    except BackendError as exc:
        raise Refused(502, f"the backend did not archive it ({exc}); nothing changed") from exc
    note = f"{len(done)} backend facts of document {document_id} invalidated"
    await _record(state, request_id, bank, memory_id, "active", "archived", action, source, f"{reason} ({note})")
    return {"invalidated": done}


async def restore(
    state: AppState, bank: str, memory_id: str, *, reason: str | None, request_id: str, locked: bool = False
) -> dict[str, Any]:
    """Restore one archived memory; the backend's account. Raises :class:`Refused`."""
    if not locked:
        async with state.bank_locks(bank):
            return await restore(state, bank, memory_id, reason=reason, request_id=request_id, locked=True)
    row = await _lockedmemory_row(state, bank, memory_id, "archived", "restored")
    document_id = row["document_id"]
    try:
        units = await _document_units(state, bank, document_id, "invalidated") if document_id else []
        if units:
            backend: dict[str, Any] = {"revalidated": await _set_state(state, bank, units, "valid", "")}
        elif document_id and await _document_units(state, bank, document_id, "valid"):
            backend = {"revalidated": []}  # already back (restored around memwarden)
        else:  # the facts are gone: retain the memory again, as memwarden forwarded it
            item = json.loads(row["item"] or "{}") or {"content": row["content"], "tags": json.loads(row["tags"])}
            item.setdefault("document_id", document_id)
            await state.memory.retain(bank, {"items": [item], "async": False})
            backend = {"recreated": True}
    except StateChangeFailed as exc:
        raise Refused(502, exc.detail("restore", "the memory stays archived")) from exc
    except BackendRejected as exc:
        raise Refused(502, f"the backend refused the restore ({exc}); the memory stays archived") from exc
    except BackendError as exc:
        raise Refused(502, f"the backend did not restore it ({exc}); the memory stays archived") from exc
    note = (
        "re-created from the ledger"
        if backend.get("recreated")
        else f"{len(backend['revalidated'])} facts re-validated"
    )
    await _record(state, request_id, bank, memory_id, "archived", "active", "restore", "operator", reason or note)
    return backend


async def archive_memory(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    payload = await _body_object(receive, send)
    if payload is None:
        return
    reason = payload.get("reason") or "archived by an operator"
    try:
        backend = await archive(state, bank, memory_id, reason=reason, request_id=request_id_of(scope))
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 200, {"id": memory_id, "status": "archived", "backend": backend})


async def restore_memory(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    payload = await _body_object(receive, send)
    if payload is None:
        return
    try:
        backend = await restore(state, bank, memory_id, reason=payload.get("reason"), request_id=request_id_of(scope))
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 200, {"id": memory_id, "status": "active", "backend": backend})


async def _record(
    state: AppState,
    request_id: str,
    bank: str,
    memory_id: str,
    frm: str,
    to: str,
    action: str,
    source: str,
    reason: str,
) -> None:
    def write(db: sqlite3.Connection) -> None:
        move(
            db,
            [memory_id],
            bank=bank,
            frm=frm,
            to=to,
            action=action,
            source=source,
            request_id=request_id,
            reason=reason,
        )

    await state.ledger.write(write)


async def memory_feedback(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    payload = await _body_object(receive, send)
    if payload is None:
        return
    score = payload.get("score")
    if score not in (1, -1) or isinstance(score, bool):
        await send_json(
            send,
            422,
            {
                "detail": [
                    {
                        "type": "literal_error",
                        "loc": ["body", "score"],
                        "msg": "Input should be 1 or -1",
                        "input": score,
                    }
                ]
            },
        )
        return
    row = await _memory_or_404(state, bank, memory_id, send)
    if row is None:
        return
    event = AuditEvent(
        action="feedback",
        bank=bank,
        memory_id=memory_id,
        source="operator",
        reason=payload.get("reason"),
        after={"score": score, "reason": payload.get("reason")},
        request_id=request_id_of(scope),
    )
    await state.ledger.write(lambda db: append_events(db, [event]))
    nudged: list[str] | None = None
    if state.local is not None and row["document_id"]:  # the self-hosted store ranks by it
        nudged = await state.local.add_feedback(bank, row["document_id"], score)
    body = {"id": memory_id, "feedback": {"score": score, "reason": payload.get("reason")}, "ranking_nudged": nudged}
    await send_json(send, 200, body)
