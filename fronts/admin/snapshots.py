"""``/warden/v1/banks/{bank}/snapshots``: config snapshots, one with what changed, and a rollback with its preview."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendError
from memwarden.db.snapshots import get_snapshot, snapshot_summaries
from memwarden.fronts.admin.queries import RollbackQuery
from memwarden.fronts.errors import backend_failed
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.config_guard import (
    apply_rollback,
    plan_rollback,
)
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json


async def list_bank_snapshots(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    items = await state.ledger.read(lambda db: snapshot_summaries(db, bank))
    await send_json(send, 200, {"bank_id": bank, "items": items})


async def show_snapshot(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    snap = await state.ledger.read(lambda db: get_snapshot(db, bank, scope["path_params"]["snapshot_id"]))
    if snap is None:
        await send_json(send, 404, {"detail": f"no snapshot {scope['path_params']['snapshot_id']} for bank {bank}"})
        return
    await send_json(
        send,
        200,
        {
            **snap.summary(),
            "config": snap.config,
            "overrides": snap.overrides,
            "stats": snap.stats,
            "inventory": snap.inventory,
        },
    )


async def rollback_snapshot(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``?preview=true``: what a rollback would do; otherwise do it (resumes an incomplete one)."""
    bank: str = scope["path_params"]["bank_id"]
    snapshot_id: str = scope["path_params"]["snapshot_id"]
    try:
        preview = read_query(query_params(scope), RollbackQuery).preview
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    cfg = state.settings.config_guard
    snap = await state.ledger.read(lambda db: get_snapshot(db, bank, snapshot_id))
    if snap is None:
        await send_json(send, 404, {"detail": f"no snapshot {snapshot_id} for bank {bank}"})
        return
    async with state.bank_locks(bank):
        snap = await state.ledger.read(lambda db: get_snapshot(db, bank, snapshot_id)) or snap  # as of now
        if snap.outcome == "expired":  # what it would re-create was erased with its window
            detail = (
                f"snapshot {snapshot_id} is past its restore window (config_guard.restore_days): what it"
                " would re-create was erased; nothing was changed"
            )
            await send_json(send, 409, {"detail": detail})
            return
        try:
            plan = await plan_rollback(memory=state.memory, ledger=state.ledger, cfg=cfg, snapshot=snap)
        except BackendError as exc:
            await backend_failed(send, scope, exc, "planning the rollback (nothing was changed)")
            return
        if preview:
            await send_json(send, 200, {"preview": True, "bank_id": bank, "plan": plan.as_dict()})
            return
        result = await apply_rollback(
            memory=state.memory,
            ledger=state.ledger,
            cfg=cfg,
            snapshot=snap,
            plan=plan,
            request_id=request_id_of(scope),
            source="manual",
        )
    status = 200 if result.complete else 502
    await send_json(
        send, status, {"preview": False, "bank_id": bank, "plan": plan.as_dict(), "result": result.as_dict()}
    )
