"""Plans: a batch of operations on memories, prepared as a dry run, applied only with the
plan's confirmation phrase.

* ``POST /warden/v1/banks/{bank}/plans`` ``{"operations": [{"op", "memory_id"}, …], "reason"}``,
  ``{"from": "cleanup"}``, or ``{"written_by": {"writer" | "channel" | "request_id", "since",
  "until"}}`` (an undo: archive every active memory one API key, one channel or one request wrote
  in the window; a restore plan of the same ids brings them back) — checks every target, records
  its state now (status, content hash, last update) and what the operation will do; changes
  nothing else. Operations: ``archive``,
  ``restore``, ``approve`` and ``reject`` (review items).
* ``GET …/plans``, ``GET …/plans/{id}``.
* ``POST …/plans/{id}/apply`` ``{"phrase": …}`` — refuses a wrong phrase (exactly the plan's:
  ``我确认执行计划 <plan id>`` by default, no trimming), a plan applied or being applied, an expired
  one, and one whose targets changed since it was made (the plan becomes ``stale``). Then the
  operations run in order under the bank's lock, each through its audited path; on a failure the
  rest are not attempted and the plan is ``partially_applied`` with exactly what was applied, what
  failed and why, and what was not attempted.

Statuses: ``planned`` → ``applying`` → ``applied`` | ``partially_applied``; or ``stale``.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.db.plans import list_plans, written_by
from memwarden.fronts.admin.bodies import ApplyBody, PlanBody
from memwarden.fronts.middleware import request_id_of
from memwarden.governance.plans import MAX_OPERATIONS
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_model, send_json

# -- routes -------------------------------------------------------------------------------------


async def plans_route(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``GET`` lists a bank's plans; ``POST`` makes one."""
    bank: str = scope["path_params"]["bank_id"]
    if scope["method"] == "GET":
        items = []
        for view in await state.ledger.read(lambda db: list_plans(db, bank)):
            view["operations"] = len(view["operations"])
            view.pop("phrase")
            items.append(view)
        await send_json(send, 200, {"bank_id": bank, "items": items})
        return
    body = await read_model(scope, receive, send, PlanBody)
    if body is None:
        return
    reason = masked(body.reason) if body.reason is not None else None  # stored and audited: no secret in clear
    operations = None if body.operations is None else [o.model_dump() for o in body.operations]
    if body.written_by is not None:
        selection = body.written_by
        ids, held = await state.ledger.read(
            lambda db: written_by(
                db,
                bank,
                writer=selection.writer,
                channel=selection.channel,
                request_id=selection.request_id,
                since=selection.since,
                until=selection.until,
                limit=MAX_OPERATIONS + 1,
            )
        )
        if len(ids) > MAX_OPERATIONS:
            detail = f"more than {MAX_OPERATIONS} memories match: narrow the window (since, until)"
            await send_json(send, 422, {"detail": [detail]})
            return
        if not ids:
            said = f"; {held} of them held for review (already kept from recall)" if held else ""
            await send_json(send, 422, {"detail": [f"no active memory matches{said}"]})
            return
        operations = [{"op": "archive", "memory_id": i} for i in ids]
        named = selection.model_dump(exclude_none=True)
        reason = reason or "undo: what " + ", ".join(f"{k} {v}" for k, v in named.items()) + " wrote"
    if body.source == "cleanup":
        report = await state.reports.cleanup_candidates(bank)
        operations = [{"op": "archive", "memory_id": c["id"]} for c in report["candidates"] if c["plannable"]]
        if not operations:
            await send_json(send, 422, {"detail": ["the cleanup report has nothing to plan"]})
            return
        reason = reason or "cleanup report"
    status, made = await state.plans.create_plan(bank, operations, reason=reason, request_id=request_id_of(scope))
    await send_json(send, status, made)


async def plan_route(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, plan_id = scope["path_params"]["bank_id"], scope["path_params"]["plan_id"]
    plan = await state.plans.show(bank, plan_id)
    if plan is None:
        await send_json(send, 404, {"detail": f"no plan {plan_id} in bank '{bank}'"})
        return
    await send_json(send, 200, plan)


async def apply_route(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, plan_id = scope["path_params"]["bank_id"], scope["path_params"]["plan_id"]
    body = await read_model(scope, receive, send, ApplyBody)
    if body is None:
        return
    status, answer = await state.plans.apply_plan(bank, plan_id, body.phrase, request_id=request_id_of(scope))
    await send_json(send, status, answer)
