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
from memwarden.fronts.admin.queries import OverviewQuery
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json


async def list_banks(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    items = await state.ledger.read(bank_summaries)
    await send_json(send, 200, {"items": items, "total": len(items)})


async def overview(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    try:
        query = read_query(query_params(scope), OverviewQuery)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    days, statuses = query.days, list(query.status) or ["active"]
    view = await state.ledger.read(lambda db: bank_overview(db, bank, statuses=statuses, days=days))
    await send_json(send, 200, view)
