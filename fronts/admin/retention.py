"""Retention: the topic × stage lifecycle.

An active memory is archived once its age — from its event time (the item's ``timestamp``, else
when memwarden first saw it) — passes its stage's period: ``process`` after 7 days, ``reference``
after 30, ``decision`` never (``[retention.periods]``, by stage or ``"topic/stage"``). Archiving
goes through the same audited path as an operator's archive (the event's action is ``expire``,
its source ``retention``); a memory that cannot be archived alone (it shares its document) is
skipped and reported, never forced.

Run on a schedule (``retention.enabled``, every ``retention.interval`` seconds, the first run a
minute after start), by ``POST /warden/v1/retention/run[?dry_run=true&bank=]`` (or ``{"dry_run": true, "bank": …}`` as
its body) and by
``memwarden retention run [--dry-run]``. A dry run lists what would go and changes nothing.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.fronts.admin.bodies import RetentionBody
from memwarden.fronts.admin.queries import RetentionQuery
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.wire.asgi import read_model, send_json


async def run_retention(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /warden/v1/retention/run[?dry_run=true][&bank=B]``, or the same options in a JSON body
    (``{"dry_run": true}``): a dry run asked for either way is a dry run; a body that is not JSON,
    names another option or another bank than the query is a 422 and runs nothing."""
    try:
        query = read_query(query_params(scope), RetentionQuery)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    body = await read_model(scope, receive, send, RetentionBody)
    if body is None:
        return
    if body.bank is not None and query.bank is not None and body.bank != query.bank:
        detail = [{"type": "value_error", "loc": ["body", "bank"], "msg": "names another bank than the query"}]
        await send_json(send, 422, {"detail": detail})
        return
    result = await state.retention.run(
        dry_run=query.dry_run or body.dry_run, bank=query.bank or body.bank, request_id=request_id_of(scope)
    )
    await send_json(send, 200, result)
