"""The review queue: items held because they conflict with the memory holding their topic key.

* ``GET  /warden/v1/banks/{bank}/review?limit=&offset=`` — the held items, oldest first, each beside
  the memory it conflicts with, a page at a time (``total``: the whole queue);
* ``POST /warden/v1/banks/{bank}/review/{id}/approve`` — forward the held item to the backend; it
  becomes active and the memory it conflicted with is superseded;
* ``POST /warden/v1/banks/{bank}/review/{id}/reject`` — drop it (kept in the ledger as ``rejected``).

Superseding removes the old memory from the backend only when memwarden created its document and
nothing else lives in it (its ``mw-`` document id); the ledger keeps its content either way.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden.db.common import Connection
from memwarden.db.memory_reads import review_count, review_queue
from memwarden.fronts.admin.queries import Page
from memwarden.fronts.errors import answer
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json


async def list_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    try:
        page = read_query(query_params(scope), Page)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    limit, offset = page.limit, page.offset

    def read(db: Connection) -> tuple[list[dict[str, Any]], int]:
        return review_queue(db, bank, limit=limit, offset=offset), review_count(db, bank)

    items, total = await state.ledger.read(read)
    await send_json(send, 200, {"bank_id": bank, "items": items, "total": total, "limit": limit, "offset": offset})


async def approve_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]

    async def approved() -> dict[str, Any]:
        # Under the bank's lock, on every instance: not beside a config change (held for its whole
        # span), an archive, or a Mem0 update superseding the same version.
        async with state.bank_locks(bank):
            return await state.review.approve(bank, memory_id, request_id=request_id_of(scope))

    await answer(send, approved())


async def reject_review(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank, memory_id = scope["path_params"]["bank_id"], scope["path_params"]["memory_id"]
    await answer(send, state.review.reject(bank, memory_id, request_id=request_id_of(scope)))
