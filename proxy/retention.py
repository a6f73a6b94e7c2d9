"""Retention: the topic × stage lifecycle (SPEC §7).

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

import asyncio
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import structlog
from starlette.types import Receive, Scope, Send

from memwarden.db.retention import due_for_retention
from memwarden.fronts.asgi import send_json
from memwarden.proxy.memories import Refused
from memwarden.proxy.memories_api import archive
from memwarden.proxy.middleware import request_id_of
from memwarden.proxy.state import AppState

log = structlog.get_logger("memwarden.retention")
FIRST_RUN_DELAY = 60.0


async def run(
    state: AppState, *, dry_run: bool, bank: str | None = None, request_id: str = "retention"
) -> dict[str, Any]:
    """One retention pass: what is due, and (unless ``dry_run``) what was archived or skipped."""
    settings = state.settings.retention
    now = datetime.now(UTC)
    candidates = await state.ledger.read(lambda db: due_for_retention(db, settings.period_for, bank=bank, at=now))
    archived: list[str] = []
    skipped: list[dict[str, Any]] = []
    if not dry_run:
        for memory in candidates:
            reason = (
                f"retention: {memory['stage']} memory older than {memory['period_days']} days ({memory['age_days']})"
            )
            try:
                await archive(
                    state,
                    memory["bank"],
                    memory["id"],
                    reason=reason,
                    request_id=request_id,
                    action="expire",
                    source="retention",
                )
            except Refused as exc:
                skipped.append({"id": memory["id"], "bank": memory["bank"], "status": exc.status, "reason": exc.detail})
            else:
                archived.append(memory["id"])
        if candidates:
            log.info("retention", due=len(candidates), archived=len(archived), skipped=len(skipped))
    return {"dry_run": dry_run, "due": candidates, "archived": archived, "skipped": skipped}


async def scheduled(state: AppState) -> None:
    """The retention job, forever (cancelled at shutdown)."""
    await asyncio.sleep(min(FIRST_RUN_DELAY, state.settings.retention.interval))
    while True:
        try:
            await run(state, dry_run=False)
        except Exception:  # the next run tries again; the server keeps serving
            log.exception("retention_failed")
        await asyncio.sleep(state.settings.retention.interval)


async def run_retention(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /warden/v1/retention/run[?dry_run=true][&bank=B]``."""
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
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
