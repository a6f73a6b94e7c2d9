"""Retention: archive what a bank's retention periods say is due, on demand or on a schedule."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import structlog

from memwarden.db.retention import due_for_retention
from memwarden.governance.archive import archive
from memwarden.governance.errors import Refused
from memwarden.governance.state import AppState

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


log = structlog.get_logger("memwarden.retention")
