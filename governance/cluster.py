"""Several instances on one database (PostgreSQL): every ``instances.HEARTBEAT`` seconds each makes
sure it holds its own lock (alive: ``db/instances.py``), and takes over what a dead one held — the
deliveries its requests were making (``sending``: queued again, audited) and its claims on queued
entries (let go) — so that another instance delivers them, in order per bank. It also learns the
queue the others left, for the outbox's limits and health; and the instance that writes the
checkpoints folds the memories' count deltas into the counts.

Between beats it listens for the others' notices (``db/notices.py``): an entry queued behind a
request (this instance's request then tells when it settles), a bank's earlier delivery settled
(its waiting worker goes on), an operator's retry or give-up (the bank's backoff cut short
here too), a key made or revoked (the keys read again), an instance stopped (a beat now). A lost
listening connection is opened again, and a beat follows each time it listens (what was sent
meanwhile is found by looking): the beat is the fallback, the notices make it rarely needed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from memwarden.db import instances, notices
from memwarden.db import outbox as rows
from memwarden.db.audit import append_events
from memwarden.db.bank_stats import fold_counts
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.governance.deliveries import queue_event
from memwarden.governance.keys import KeyRing
from memwarden.governance.outbox import Outbox

log = structlog.get_logger("memwarden.cluster")


def _tick(db: Connection) -> tuple[list[rows.Entry], list[str], list[str]]:
    """What dead instances held, taken over: their deliveries in flight (queued again), the banks
    now unclaimed, and the dead instances' ids (forgotten)."""
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
    return taken, banks, dead


class Cluster:
    """This instance among the others: :meth:`run` until cancelled (the app's lifespan)."""

    def __init__(
        self,
        ledger: Database,
        outbox: Outbox | None,
        keys: KeyRing,
        *,
        every: float = instances.HEARTBEAT,
        recover: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """``recover``: what a start settles of a stopped process's work besides the outbox (the
        self-hosted store's pending memories and async retains), run when an instance is found dead."""
        self.ledger, self.outbox, self.keys, self.every = ledger, outbox, keys, every
        self.recover = recover
        self._stopped = False  # an instance said it stopped: what it left is recovered at the next beat
        self._beat_now = asyncio.Event()
        self.heard = 0  # notices acted on, and how often it (re)started listening: the tests look
        self.listens = 0

    async def run(self) -> None:
        listener = None
        if self.ledger.url is not None:
            listener = asyncio.get_running_loop().create_task(
                notices.listen(self.ledger.url, self.notice, self.listening, self.lost)
            )
        try:
            while True:
                self._beat_now.clear()  # a notice during the beat asks for another one
                await self.beat()
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns when the event is set
                # in the same turn as a cancel — the stop swallowed, and the lifespan waits forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.every):
                        await self._beat_now.wait()
        finally:
            if listener is not None:
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)

    async def beat(self) -> None:
        ledger, outbox = self.ledger, self.outbox
        try:
            await ledger.heartbeat()  # this instance's own lock (its connection replaced if it was lost)
            taken, banks, dead = await ledger.write(_tick)
            if taken:
                log.warning("outbox_taken_over", entries=len(taken), banks=sorted({e.bank for e in taken}))
            stopped, self._stopped = self._stopped, False
            if (dead or stopped) and self.recover is not None:  # found dead by this beat alone, or one said it stopped
                await self.recover()
            if outbox is not None:
                outbox.adopt(await ledger.read(rows.queued), banks)
            if ledger.leads():  # the memories' count deltas, folded by one instance (db/bank_stats.py)
                await ledger.write(fold_counts)
        except Exception:  # a lost database (health says so): tried again at the next beat
            log.exception("cluster_tick_failed")

    def notice(self, notice: notices.Notice) -> None:
        # Its own notices were acted on where they were sent — but a settled delivery wakes the bank's
        # worker here too (it may wait behind this instance's request for an entry another queued).
        if notice.origin == self.ledger.instance_id and notice.kind != notices.SETTLED:
            return
        self.heard += 1
        if notice.kind == notices.KEYS:
            self.keys.stale()
        elif notice.bank is not None and notice.kind == notices.POKE and self.outbox is not None:
            self.outbox.poke(notice.bank)
        elif notice.bank is not None and notice.kind == notices.SETTLED and self.outbox is not None:
            self.outbox.wake(notice.bank)
        elif notice.kind == notices.QUEUED:
            if notice.bank is not None and self.outbox is not None:
                self.outbox.queued_elsewhere(notice.bank)
            elif notice.bank is None:  # a bank too long to name: the beat reads the outbox
                self._beat_now.set()
        else:  # an instance stopped (its claims are the others' now), or a notice for every bank
            self._stopped = self._stopped or notice.kind == notices.LEFT
            self._beat_now.set()

    def listening(self) -> None:
        """(Again) listening: what was sent while no one listened is found by looking."""
        self.listens += 1
        self.keys.stale()
        self._beat_now.set()

    def lost(self, why: str) -> None:
        log.warning("notices_lost", error=why)
