"""Memories as an operator sees them: list and filter the ledger, one memory with its
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

from collections.abc import Sequence
from typing import Any

from starlette.datastructures import QueryParams
from starlette.types import Receive, Scope, Send

from memwarden.db.memory_reads import LedgerQuery, list_memories, memory_account, read_cursor
from memwarden.fronts.admin.bodies import FeedbackBody, ReasonBody
from memwarden.fronts.admin.queries import LedgerListing
from memwarden.fronts.errors import answer
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import QueryProblem, query_pairs, read_query
from memwarden.governance.errors import Refused
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_model, send_json


def ledger_query(pairs: Sequence[tuple[str, str]]) -> LedgerQuery:
    """The listing's query string read (:class:`~memwarden.fronts.admin.queries.LedgerListing`);
    the API and the command line's ``--data-dir`` mode read it alike. Raises :class:`QueryProblem`."""
    q = read_query(QueryParams(list(pairs)), LedgerListing)
    after = None
    if q.after is not None:
        if q.offset:
            raise QueryProblem("after", "a cursor pages by itself: give after or offset, not both", q.after)
        try:
            after = read_cursor(q.after)
        except ValueError as exc:
            raise QueryProblem("after", str(exc), q.after) from None
    return LedgerQuery(
        statuses=q.status,
        topic=q.topic,
        stage=q.stage,
        topic_key=q.topic_key,
        tags=q.tag,
        q=q.q,
        limit=q.limit,
        offset=q.offset,
        after=after,
    )


async def list_ledger_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    try:
        query = ledger_query(query_pairs(scope))
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    page = await state.ledger.read(lambda db: list_memories(db, bank, query))
    await send_json(send, 200, page)


async def memory_detail(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    view = await state.ledger.read(lambda db: memory_account(db, bank, memory_id))
    if view is None:
        await send_json(send, 404, {"detail": f"Memory '{memory_id}' not found in bank '{bank}'"})
        return
    await send_json(send, 200, view)


def _masked(reason: str | None) -> str | None:
    """An operator's words are stored and audited: no secret in them in clear."""
    return masked(reason) if reason is not None else None


async def archive_memory(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    body = await read_model(scope, receive, send, ReasonBody)
    if body is None:
        return
    reason = _masked(body.reason) or "archived by an operator"

    async def work() -> dict[str, Any]:
        backend = await state.archiver.archive(bank, memory_id, reason=reason, request_id=request_id_of(scope))
        return {"id": memory_id, "status": "archived", "backend": backend}

    await answer(send, work())


async def restore_memory(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    body = await read_model(scope, receive, send, ReasonBody)
    if body is None:
        return
    reason = _masked(body.reason)

    async def work() -> dict[str, Any]:
        backend = await state.archiver.restore(bank, memory_id, reason=reason, request_id=request_id_of(scope))
        return {"id": memory_id, "status": "active", "backend": backend}

    await answer(send, work())


async def memory_feedback(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    body = await read_model(scope, receive, send, FeedbackBody)
    if body is None:
        return
    score, reason = body.score, _masked(body.reason)
    try:
        nudged = await state.curator.feedback(
            bank, memory_id, score=score, reason=reason, request_id=request_id_of(scope)
        )
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(
        send, 200, {"id": memory_id, "feedback": {"score": score, "reason": reason}, "ranking_nudged": nudged}
    )
