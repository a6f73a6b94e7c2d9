"""The delivery outbox (in front of a backend): what waits for the backend, and an operator's say.

* ``GET  /warden/v1/outbox?state=&bank=&limit=&offset=`` — entries, newest first, with the summary
  (depth, oldest age, dead letters, limits);
* ``GET  /warden/v1/outbox/{operation_id}`` — one entry;
* ``POST /warden/v1/outbox/{operation_id}/retry`` — deliver now: a queued entry's backoff is cut
  short; a dead letter or a given-up entry is queued again (its memories back to ``pending``);
* ``POST /warden/v1/outbox/{operation_id}/give-up`` with ``X-Warden-Confirm: <bank>`` — stop trying;
  its memories become ``failed``. Audited; the entry stays, so it can still be retried.

Self-hosted, there is no outbox (the store shares memwarden's database): 404 with a word on why.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.db import outbox as outbox_rows
from memwarden.db.audit import current_actor
from memwarden.fronts.admin.queries import OutboxQuery
from memwarden.fronts.auth import key_allows
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.errors import Refused
from memwarden.governance.outbox import Outbox
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json

NO_OUTBOX = "no delivery outbox: the self-hosted store writes in memwarden's own database"


async def _outbox(state: AppState, send: Send) -> Outbox | None:
    if state.outbox is None:
        await send_json(send, 404, {"detail": NO_OUTBOX})
    return state.outbox


async def list_outbox(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    outbox = await _outbox(state, send)
    if outbox is None:
        return
    try:
        query = read_query(query_params(scope), OutboxQuery)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    wanted, bank, limit, offset = query.state, query.bank, query.limit, query.offset
    entries, total = await state.ledger.read(
        lambda db: outbox_rows.listing(db, state=wanted, bank=bank, limit=limit, offset=offset)
    )
    await send_json(
        send,
        200,
        {
            "summary": (await outbox.summary(bank)).as_json(),
            "total": total,
            "limit": limit,
            "offset": offset,
            "items": [e.public() for e in entries],
        },
    )


async def show_outbox(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    if await _outbox(state, send) is None:
        return
    operation_id: str = scope["path_params"]["operation_id"]
    entry = await state.ledger.read(lambda db: outbox_rows.find(db, operation_id))
    if entry is None:
        await send_json(send, 404, {"detail": f"no outbox entry {operation_id}"})
        return
    await send_json(send, 200, entry.public())


async def retry_outbox(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await _act(state, scope, send, give_up=False)


async def give_up_outbox(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await _act(state, scope, send, give_up=True)


async def _act(state: AppState, scope: Scope, send: Send, *, give_up: bool) -> None:
    """An operator's retry, or give-up (confirmed with the entry's bank)."""
    outbox = await _outbox(state, send)
    if outbox is None:
        return
    operation_id: str = scope["path_params"]["operation_id"]
    request_id = request_id_of(scope)
    try:
        if not give_up:
            entry = await outbox.retry(operation_id, actor=current_actor(), request_id=request_id)
        else:
            found = await state.ledger.read(lambda db: outbox_rows.find(db, operation_id))
            if found is None:
                raise Refused(404, f"no outbox entry {operation_id}")
            confirm = dict(scope["headers"]).get(b"x-warden-confirm", b"").decode("utf-8", "replace")
            if confirm != found.bank and not key_allows(scope, "admin", found.bank):
                raise Refused(
                    409,
                    f"giving up makes this entry's memories failed: confirm with X-Warden-Confirm: {found.bank}",
                )
            entry = await outbox.give_up(operation_id, actor=current_actor(), request_id=request_id)
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 200, entry.public())
