"""Reports: pure reads, text for people and JSON for machines.

* **cleanup** (``GET /warden/v1/banks/{bank}/reports/cleanup``, ``memwarden report cleanup BANK``):
  the active memories a person would likely archive — noise by today's rules (the pipeline
  re-judges each one: rules improve after a memory was stored), memories past their retention
  period, duplicates of an older memory, and ``active_context`` values a newer one replaced. Each
  says why and whether a plan can take it (a memory sharing its document with other active
  memories cannot be archived alone). ``POST …/plans {"from": "cleanup"}`` turns it into a plan.
* **health** (``GET …/reports/health?days=7``, ``memwarden report health BANK``): the window's new
  memories and verdicts, the review queue, cleanup candidates, topic-key conflicts, and
  consistency — every active ledger memory's document present in the backend, and in the
  self-hosted store rows vs vectors vs full-text entries — ending in ``ok``, ``attention`` or
  ``critical`` with the reasons.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.fronts.admin.queries import HealthQuery
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json


async def cleanup_route(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await send_json(send, 200, await state.reports.cleanup_candidates(scope["path_params"]["bank_id"]))


async def health_route(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    try:
        days = read_query(query_params(scope), HealthQuery).days
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    await send_json(send, 200, await state.reports.health(scope["path_params"]["bank_id"], days))
