"""Retention: the topic × stage lifecycle.

An active memory is archived once its age — from its event time (the item's ``timestamp``, else
when memwarden first saw it) — passes its stage's period: ``process`` after 7 days, ``reference``
after 30, ``decision`` never (``[retention.periods]``, by stage or ``"topic/stage"``). Archiving
goes through the same audited path as an operator's archive (the event's action is ``expire``,
its source ``retention``); a memory that cannot be archived alone (it shares its document) is
skipped and reported, never forced.

Run on a schedule (``retention.enabled``, every ``retention.interval`` seconds, the first run a
minute after start), by ``POST /warden/v1/retention/run[?dry_run=true&bank=]`` and by
``memwarden retention run [--dry-run]``. A dry run lists what would go and changes nothing.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import query_params
from memwarden.governance.retention import run
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json


async def run_retention(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /warden/v1/retention/run[?dry_run=true][&bank=B]``."""
    query = query_params(scope)
    flag = query.get("dry_run", "false").lower()
    if flag not in ("true", "false", "1", "0", "yes", "no"):
        await send_json(
            send,
            422,
            {"detail": [{"type": "bool_parsing", "loc": ["query", "dry_run"], "msg": "true or false", "input": flag}]},
        )
        return
    result = await run(
        state, dry_run=flag in ("true", "1", "yes"), bank=query.get("bank") or None, request_id=request_id_of(scope)
    )
    await send_json(send, 200, result)
