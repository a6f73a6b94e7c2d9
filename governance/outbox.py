"""The delivery outbox in front of a backend: no accepted write is lost while the backend is down.

An enforced retain records its delivery (``db.outbox``) in the transaction that records its
verdicts, ``sending``. The request then delivers it itself, as before, when the bank has nothing
queued; when the backend cannot be reached, times out or answers 5xx/408/429, the entry becomes
``queued`` and the client gets Hindsight's answer for an accepted asynchronous retain, with the
entry's operation id. A worker per bank delivers queued entries in order, one at a time, retrying
with exponential backoff (tenacity) until the backend takes them; every item carries its document
id, and Hindsight replaces a document retained again, so a delivery repeated after a crash lands
once in effect. A 4xx on delivery makes the entry a dead letter (its memories ``failed``, the
backend's answer kept, audited); an operator may retry it or give it up (``outbox_operator``). While the queue is past
its limits (``outbox.max_items``, ``outbox.max_age``) a governed write is refused with 503 before
anything is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Literal

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from memwarden.backends.base import BackendRejected, BackendUnavailable, MemoryBackend
from memwarden.db import notices
from memwarden.db import outbox as rows
from memwarden.db.audit import append_events
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.deliveries import mark_failed
from memwarden.db.memories import Change
from memwarden.governance.deliveries import (
    UNAVAILABLE_STATUS,
    Corrupt,
    OutboxFull,
    Parcel,
    Summary,
    entry_event,
    epoch,
    memory_ids_of,
    parcel,
    queue_event,
    settle_delivered,
    transient,
)
from memwarden.governance.locks import BankGates, GateClosed
from memwarden.governance.outbox_operator import OperatorActions
from memwarden.governance.review import Review
from memwarden.metrics import Metrics
from memwarden.settings import OutboxSettings

log = structlog.get_logger("memwarden.outbox")

__all__ = ["Outbox", "OutboxFull"]


class Outbox(OperatorActions):
    """The queue's worker and its bookkeeping (what is queued, per bank, in memory for the hot path).

    A bank's worker and an operator's retry or give-up take the bank's lock around reading an
    entry's state and changing it, and every state change is a compare-and-set in the database:
    an entry is delivered, dead-lettered or given up once, whoever gets there first."""

    def __init__(
        self,
        ledger: Database,
        memory: MemoryBackend,
        review: Review,
        gates: BankGates,
        metrics: Metrics,
        settings: OutboxSettings,
        *,
        write_wait: float,
    ) -> None:
        """Deliveries go to ``memory``; ``review`` retires what they supersede; ``write_wait``: how
        long a delivery waits at a bank's gate held by a guarded change."""
        self.ledger, self.memory, self.review, self.gates, self.metrics = ledger, memory, review, gates, metrics
        self.settings = settings
        self.write_wait = write_wait
        # bank → {seq: (items, when it was queued)}, in the order they were queued: the first is the oldest.
        self._queued: dict[str, dict[int, tuple[int, float]]] = {}
        # Banks another instance said it queued an entry of since the last beat (notices.QUEUED).
        self._elsewhere: set[str] = set()
        self._items = 0
        self._inflight: set[int] = set()  # entries a delivery is under way for
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._work: dict[str, asyncio.Event] = {}  # new entries for the bank's worker
        self._poke: dict[str, asyncio.Event] = {}  # cut the bank's backoff short: retry now, give up, stop
        self._locks: dict[str, asyncio.Lock] = {}
        self._stopping = False

    # -- bookkeeping --------------------------------------------------------------------------

    async def load(self) -> None:
        """Read what is queued (at start) and prune delivered entries past ``keep_delivered``."""
        before = (datetime.now(UTC) - timedelta(seconds=self.settings.keep_delivered)).isoformat()
        await self.ledger.write(lambda db: rows.prune_delivered(db, before))
        for seq, bank, items, since in await self.ledger.read(rows.queued):
            self._add(seq, bank, items, epoch(since))

    def busy(self, bank: str) -> bool:
        """Entries of ``bank`` wait: a new write goes behind them, not past them."""
        return bool(self._queued.get(bank))

    def queued_elsewhere(self, bank: str) -> None:
        """Another instance queued an entry of ``bank`` (its notice): until the next beat reads the
        outbox, this instance knows it without reading it."""
        self._elsewhere.add(bank)

    def tell_queued(self, db: Connection, bank: str) -> None:
        """Inside the write that queues an entry of ``bank`` behind a request's delivery (or hands a
        request's own entry to the workers): the other instances are told (PostgreSQL)."""
        notices.send(db, notices.QUEUED, self.ledger.instance_id, bank)

    def tell_settled(self, db: Connection, bank: str) -> None:
        """Inside the write that settles a request's own delivery of a ``bank`` write: when entries
        of the bank wait — known from this instance's queue, the beat's look at the outbox and the
        others' notices, never from a read on every write — every instance is told, so that the
        worker waiting for it (``rows.claim_first``'s ``WAIT``) goes on wherever it runs."""
        if self._queued.get(bank) or bank in self._elsewhere:
            notices.send(db, notices.SETTLED, self.ledger.instance_id, bank)

    def _add(self, seq: int, bank: str, items: int, since: float) -> None:
        queue = self._queued.setdefault(bank, {})
        if seq not in queue:
            queue[seq] = (items, since)
            self._items += items

    def _remove(self, bank: str, seq: int) -> None:
        found = self._queued.get(bank, {}).pop(seq, None)
        if found is not None:
            self._items -= found[0]

    def _oldest(self, bank: str | None = None) -> float | None:
        """When the longest-waiting entry (of ``bank``, or of any) was queued: the first of a
        bank's queue (entries are added in the order they are queued)."""
        queues = [self._queued.get(bank, {})] if bank is not None else list(self._queued.values())
        return min((next(iter(q.values()))[1] for q in queues if q), default=None)

    def check_room(self, bank: str) -> None:
        """Raise :class:`OutboxFull` when the queue is past a limit: its items (all banks: they are
        memwarden's to keep), or the age of ``bank``'s longest-waiting write (one bank whose writes
        the backend will not take does not stop the others)."""
        if self._items >= self.settings.max_items:
            raise OutboxFull(
                f"the delivery outbox holds {self._items} items waiting for the backend"
                f" (limit {self.settings.max_items})"
            )
        oldest = self._oldest(bank)
        if oldest is not None and time.time() - oldest >= self.settings.max_age:
            raise OutboxFull(
                f"the oldest write to bank '{bank}' in the delivery outbox has waited"
                f" {time.time() - oldest:.0f} s for the backend (limit {self.settings.max_age:.0f} s)"
            )

    def queued(self, entry: rows.Entry) -> None:
        """``entry`` is queued: count it and make sure its bank's worker runs."""
        self._add(entry.seq, entry.bank, entry.items, time.time())
        self.wake(entry.bank)

    def _event(self, events: dict[str, asyncio.Event], bank: str) -> asyncio.Event:
        return events.setdefault(bank, asyncio.Event())

    def _lock(self, bank: str) -> asyncio.Lock:
        return self._locks.setdefault(bank, asyncio.Lock())

    def wake(self, bank: str) -> None:
        """New work for ``bank``: its worker runs (started if it is not running)."""
        if self._stopping:
            return
        self._event(self._work, bank).set()
        worker = self._workers.get(bank)
        if worker is None or worker.done():
            # In a context of its own: not the log context of the request that happened to wake it.
            loop = asyncio.get_running_loop()
            self._workers[bank] = loop.create_task(self._drain(bank), context=contextvars.Context())

    def poke(self, bank: str) -> None:
        """Cut ``bank``'s backoff short (an operator's retry now, a give-up, a stop)."""
        self._event(self._poke, bank).set()
        self.wake(bank)

    def start(self) -> None:
        for bank, queue in self._queued.items():
            if queue:
                self.wake(bank)

    def adopt(self, queued: list[tuple[int, str, int, str]], banks: list[str]) -> None:
        """What the database says is queued (other instances' entries too: the limits and the
        health count them), and the banks whose queued entries no live instance holds: their
        workers run here."""
        self._queued, self._items, self._elsewhere = {}, 0, set()
        for seq, bank, items, since in queued:
            self._add(seq, bank, items, epoch(since))
        for bank in banks:
            self.wake(bank)

    async def stop(self, grace: float) -> None:
        """Stop delivering: a delivery in flight may finish within ``grace`` seconds, then it is
        cancelled (its entry stays queued and is delivered again at the next start)."""
        self._stopping = True
        for event in [*self._poke.values(), *self._work.values()]:
            event.set()
        workers = [w for w in self._workers.values() if not w.done()]
        if not workers:
            return
        _, pending = await asyncio.wait(workers, timeout=grace)
        for worker in pending:
            worker.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def summary(self, bank: str | None = None) -> Summary:
        """What health and metrics show: depth, oldest age, dead letters, limits (of one bank or all)."""
        counts = await self.ledger.read(lambda db: rows.counts(db, bank))
        queues = [q for b, q in self._queued.items() if bank is None or b == bank]
        oldest = self._oldest(bank)
        full = None
        try:  # past a limit: for this bank, or (all banks) for any of them
            for name in [bank] if bank is not None else [b for b, q in self._queued.items() if q] or [""]:
                self.check_room(name)
        except OutboxFull as exc:
            full = str(exc)
        return Summary(
            queued_entries=sum(len(q) for q in queues),
            queued_items=sum(items for q in queues for items, _ in q.values()),
            oldest_age_s=round(time.time() - oldest, 1) if oldest is not None else None,
            dead_letters=counts["dead"][0],
            dead_items=counts["dead"][1],
            given_up=counts["given_up"][0],
            delivered_kept=counts["delivered"][0],
            max_items=self.settings.max_items,
            max_age_s=self.settings.max_age,
            full=full,
        )

    # -- the worker ---------------------------------------------------------------------------

    async def _drain(self, bank: str) -> None:
        """Deliver ``bank``'s queued entries in order until none is left. New work that arrives
        while the last read is under way is not missed: the work event is cleared before each read
        and looked at again before leaving (no await between that look and the task's end)."""
        work = self._event(self._work, bank)
        while not self._stopping:
            work.clear()
            try:
                # The bank's first entry, claimed: another live instance holding it delivers it (and
                # the ones behind it) — if it dies, its claim is let go (governance/cluster.py).
                entry = await self.ledger.write(lambda db: self._claim(db, bank))
                if entry == rows.WAIT:  # a request still delivers an earlier write: it wakes us when settled
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.settings.retry_max):  # a stop is never swallowed
                            await work.wait()
                    continue
                if entry is None:
                    if work.is_set():
                        continue
                    return
                await self._deliver_with_retries(entry)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug or a failing ledger must not end deliveries: logged, tried again
                log.exception("outbox_worker_failed", bank=bank)
                await self._sleep(bank, self.settings.retry_max)

    def _claim(self, db: Connection, bank: str) -> rows.Entry | Literal["wait"] | None:
        """The bank's first entry, claimed (``rows.claim_first``) — after queuing the bank's writes
        whose requests began to deliver them ``request_grace`` seconds ago and never settled."""
        since = datetime.now(UTC) - timedelta(seconds=self.settings.request_grace)
        before = since.isoformat(timespec="microseconds")
        for entry in rows.unsettled(db, bank, before):
            reason = f"its request had not settled it after {self.settings.request_grace:g} s"
            if rows.hand_over(db, entry.seq, reason):
                append_events(db, [queue_event(entry, f"{reason}; queued for delivery")])
        return rows.claim_first(db, bank, self.ledger.instance_id)

    async def _sleep(self, bank: str, seconds: float) -> None:
        """Backoff that a retry-now, a give-up or a stop cuts short (not new work: an outage with
        writes coming in is not hammered at the rate of the writes)."""
        poke = self._event(self._poke, bank)
        if self._stopping:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await poke.wait()
        poke.clear()

    async def _deliver_with_retries(self, entry: rows.Entry) -> None:
        try:
            got = parcel(entry)
        except Corrupt as exc:
            log.error("outbox_corrupt_row", seq=entry.seq, bank=entry.bank, error=str(exc))
            async with self._lock(entry.bank):
                await self._dead(entry, memory_ids_of(entry), None, str(exc))
            return
        errors = 0  # server errors answered in a row (500, 501 …): past the limit, a dead letter

        async def attempt(number: int) -> None:
            nonlocal errors
            async with self._lock(entry.bank):
                current = await self.ledger.read(lambda db: rows.find(db, entry.operation_id))
                if (
                    current is None
                    or current.seq != entry.seq
                    or current.state != "queued"
                    or current.owner not in (None, self.ledger.instance_id)  # taken over meanwhile
                ):
                    self._remove(entry.bank, entry.seq)  # given up, or retried as a new entry, meanwhile
                    return
                # On a shared database the attempt is marked, so that an operator's give-up on another
                # instance waits for it (this instance's own give-ups see ``_inflight``).
                shared, me = self.ledger.shared, self.ledger.instance_id
                if shared and not await self.ledger.write(lambda db: rows.attempting(db, entry.seq, me)):
                    self._remove(entry.bank, entry.seq)  # given up or retried between the look and the mark
                    return
                try:
                    await self.deliver(got, attempts=entry.attempts + number)
                    return
                except BackendUnavailable as exc:
                    errors = errors + 1 if exc.status is not None and exc.status not in UNAVAILABLE_STATUS else 0
                    if errors < self.settings.max_errors:
                        raise
                    said = f"the backend answered {exc.status} to {errors} deliveries in a row: {exc}"
                    await self._dead(entry, got.memory_ids, exc.status, said)

        async def before_sleep(retry: RetryCallState) -> None:
            error = retry.outcome.exception() if retry.outcome else None
            await self.ledger.write(lambda db: rows.attempted(db, entry.seq, str(error)))
            log.warning("outbox_delivery_failed", bank=entry.bank, operation_id=entry.operation_id, error=str(error))

        retrying = AsyncRetrying(
            retry=retry_if_exception_type((BackendUnavailable, GateClosed)),
            wait=wait_exponential(multiplier=self.settings.retry_initial, max=self.settings.retry_max),
            stop=lambda _: self._stopping,
            sleep=lambda seconds: self._sleep(entry.bank, seconds),
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            async for trying in retrying:
                with trying:
                    await attempt(trying.retry_state.attempt_number)
        except (BackendUnavailable, GateClosed):  # stopping: the entry stays queued
            return

    async def deliver(
        self, got: Parcel, *, attempts: int, source: str = "outbox", action: str = "deliver", reason: str = ""
    ) -> bool:
        """One delivery of an entry (queued, or ``sending`` at recovery); settles it: delivered
        (True), or dead on a 4xx (False). Raises :class:`BackendUnavailable` (or
        :class:`GateClosed`) when it may be tried again. The caller holds the bank's lock."""
        entry = got.entry
        self._inflight.add(entry.seq)  # an operator's give-up is refused meanwhile
        try:
            async with self.gates.writing(entry.bank, self.write_wait):
                try:
                    receipt = await self.memory.retain(
                        entry.bank, got.items, document_tags=got.document_tags, wait=False
                    )
                except BackendRejected as exc:
                    if transient(exc.status):
                        raise BackendUnavailable(f"the backend answered {exc.status}", status=exc.status) from exc
                    await self._dead(entry, got.memory_ids, exc.status, json.dumps(exc.body, ensure_ascii=False))
                    return False
                said = reason or f"delivered from the outbox (operation {entry.operation_id}, attempt {attempts})"
                change = Change("pending", "active", action, source, entry.request_id, "memwarden", reason=said)

                # An entry the client was told about keeps answering its operation id a while.
                keep, operation = entry.state == "queued", receipt.operation_id
                if not await self.ledger.write(lambda db: settle_delivered(db, got, change, keep, operation)):
                    log.warning("outbox_settled_meanwhile", bank=entry.bank, operation_id=entry.operation_id)
        finally:
            self._inflight.discard(entry.seq)
        self._remove(entry.bank, entry.seq)
        self.metrics.outbox_delivered.inc()
        log.info("outbox_delivered", bank=entry.bank, operation_id=entry.operation_id, items=entry.items)
        for _, old_id in got.supersede:
            await self.review.retire(entry.bank, old_id)
        return True

    async def _dead(self, entry: rows.Entry, memory_ids: list[str], status: int | None, answer: str) -> None:
        """The backend refused the entry (or it cannot be read): a dead letter, its memories failed."""
        said = f"the backend refused the delivery with {status}" if status is not None else answer

        def settle(db: Connection) -> bool:
            if not rows.settle(db, entry.seq, "dead", answer=answer if status is not None else None, error=said):
                return False  # settled meanwhile
            mark_failed(
                db,
                bank=entry.bank,
                memory_ids=memory_ids,
                reason=said,
                request_id=entry.request_id,
                actor="memwarden",
                source="outbox",
            )
            append_events(db, [entry_event(entry, "outbox_dead", "memwarden", said, state="dead")])
            return True

        if await self.ledger.write(settle):
            self.metrics.outbox_dead.inc()
            log.warning("outbox_dead_letter", bank=entry.bank, operation_id=entry.operation_id, reason=said)
        self._remove(entry.bank, entry.seq)
