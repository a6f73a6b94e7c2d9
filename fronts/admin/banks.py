"""The banks at a glance, for the dashboard (and anyone): ``/warden/v1/banks`` and a bank's overview.

* ``GET /warden/v1/banks`` — every bank the ledger has met, with its memories by status (admin on
  every bank: the list names them all);
* ``GET /warden/v1/banks/{bank}/overview?days=30&status=active`` — memories by status, the
  topic × stage matrix (of the memories in ``status``, comma-separated; default ``active``),
  memories recorded per day over ``days`` days with the running total, the review queue's size,
  the last config change.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.db.bank_stats import bank_overview, bank_summaries
from memwarden.db.memory_reads import STATUSES
from memwarden.fronts.query import QueryProblem, bounded_int, query_params
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json

MAX_DAYS = 366


async def list_banks(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    items = await state.ledger.read(bank_summaries)
    await send_json(send, 200, {"items": items, "total": len(items)})


async def overview(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    query = query_params(scope)
    try:
        days = bounded_int(query, "days", 30, 1, MAX_DAYS)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    statuses = list(dict.fromkeys(s for s in query.get("status", "active").split(",") if s)) or ["active"]
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        msg = f"must be one of {', '.join(STATUSES)}"
        await send_json(
            send,
            422,
            {"detail": [{"type": "value_error", "loc": ["query", "status"], "msg": msg, "input": unknown[0]}]},
        )
        return
    view = await state.ledger.read(lambda db: bank_overview(db, bank, statuses=statuses, days=days))
    await send_json(send, 200, view)
