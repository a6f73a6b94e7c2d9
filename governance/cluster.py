"""Several instances on one database (PostgreSQL): every ``instances.HEARTBEAT`` seconds each makes
sure it holds its own lock (alive: ``db/instances.py``), and takes over what a dead one held — the
deliveries its requests were making (``sending``: queued again, audited) and its claims on queued
entries (let go) — so that another instance delivers them, in order per bank. It also learns the
queue the others left, for the outbox's limits and health; and the instance that writes the
checkpoints folds the memories' count deltas into the counts."""

from __future__ import annotations

import asyncio

import structlog

from memwarden.db import instances
from memwarden.db import outbox as rows
from memwarden.db.audit import append_events
from memwarden.db.bank_stats import fold_counts
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.governance.deliveries import queue_event
from memwarden.governance.outbox import Outbox

log = structlog.get_logger("memwarden.cluster")


def _tick(db: Connection) -> tuple[list[rows.Entry], list[str]]:
    taken, banks = rows.take_over(db)
    append_events(
        db,
        [
            queue_event(e, f"its instance ({e.owner}) stopped before the backend's answer; queued for another")
            for e in taken
        ],
    )
    dead = instances.forget_dead(db)
    if dead:
        log.warning("instances_gone", instances=dead)
    return taken, banks


async def keep_alive(ledger: Database, outbox: Outbox, every: float = instances.HEARTBEAT) -> None:
    """Run until cancelled (the app's lifespan)."""
    while True:
        try:
            await ledger.heartbeat()  # this instance's own lock (its connection replaced if it was lost)
            taken, banks = await ledger.write(_tick)
            if taken:
                log.warning("outbox_taken_over", entries=len(taken), banks=sorted({e.bank for e in taken}))
            outbox.adopt(await ledger.read(rows.queued), banks)
            if ledger.leads():  # the memories' count deltas, folded by one instance (db/bank_stats.py)
                await ledger.write(fold_counts)
        except Exception:  # a lost database (health says so): tried again at the next beat
            log.exception("cluster_tick_failed")
        await asyncio.sleep(every)
