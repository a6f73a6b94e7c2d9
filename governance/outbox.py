"""The delivery outbox in front of a backend: no accepted write is lost while the backend is down.

An enforced retain records its delivery (``db.outbox``) in the transaction that records its
verdicts, ``sending``. The request then delivers it itself, as before, when the bank has nothing
queued; when the backend cannot be reached, times out or answers 5xx/408/429, the entry becomes
``queued`` and the client gets Hindsight's answer for an accepted asynchronous retain, with the
entry's operation id. A worker per bank delivers queued entries in order, one at a time, retrying
with exponential backoff (tenacity) until the backend takes them; every item carries its document
id, and Hindsight replaces a document retained again, so a delivery repeated after a crash lands
once in effect. A 4xx on delivery makes the entry a dead letter (its memories ``failed``, the
backend's answer kept, audited); an operator may retry it or give it up. While the queue is past
its limits (``outbox.max_items``, ``outbox.max_age``) a governed write is refused with 503 before
anything is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from memwarden.backends.base import BackendRejected, BackendUnavailable
from memwarden.backends.types import Item
from memwarden.db import outbox as rows
from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import Connection
from memwarden.db.memories import Change, mark_delivered, mark_failed, move
from memwarden.governance.errors import Refused
from memwarden.governance.locks import GateClosed

if TYPE_CHECKING:
    from memwarden.governance.state import AppState

log = structlog.get_logger("memwarden.outbox")

TRANSIENT_STATUS = frozenset({408, 425, 429})  # with every 5xx: the backend may take it later


def transient(status: int) -> bool:
    return status >= 500 or status in TRANSIENT_STATUS


class OutboxFull(Exception):
    """The queue is past a limit: a governed write is refused (503) before anything is recorded."""


class Corrupt(Exception):
    """An outbox row that cannot be read (its JSON damaged)."""


@dataclass(frozen=True)
class Parcel:
    """An entry read for delivery."""

    entry: rows.Entry
    items: list[Item]
    document_tags: tuple[str, ...]
    memory_ids: list[str]
    supersede: list[tuple[str, str]]


def parcel(entry: rows.Entry) -> Parcel:
    try:
        body = json.loads(entry.body or "")
        items = [Item.from_json(i) for i in body["items"]]
        tags = tuple(str(t) for t in body.get("document_tags") or ())
        memory_ids = [str(m) for m in json.loads(entry.memory_ids)]
        supersede = [(str(a), str(b)) for a, b in json.loads(entry.supersede)]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise Corrupt(f"corrupt outbox row {entry.seq}: {type(exc).__name__}: {exc}") from None
    return Parcel(entry, items, tags, memory_ids, supersede)


@dataclass(frozen=True)
class Summary:
    """The outbox as health, the admin API and the metrics show it."""

    queued_entries: int
    queued_items: int
    oldest_age_s: float | None
    dead_letters: int
    dead_items: int
    given_up: int
    delivered_kept: int
    max_items: int
    max_age_s: float
    full: str | None  # why governed writes answer 503, while they do

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


class Outbox:
    """The queue's worker and its bookkeeping (what is queued, per bank, in memory for the hot path)."""

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.settings = state.settings.outbox
        # seq → (bank, items, when it was queued), in the order they were queued: the first is the oldest.
        self._queued: dict[int, tuple[str, int, float]] = {}
        self._items = 0
        self._banks: Counter[str] = Counter()  # bank → entries queued
        self._inflight: set[int] = set()  # entries a worker is delivering now
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._stopping = False

    # -- bookkeeping --------------------------------------------------------------------------

    async def load(self) -> None:
        """Read what is queued (at start) and prune delivered entries past ``keep_delivered``."""
        before = (datetime.now(UTC) - timedelta(seconds=self.settings.keep_delivered)).isoformat()
        await self.state.ledger.write(lambda db: rows.prune_delivered(db, before))
        for seq, bank, items, created in await self.state.ledger.read(rows.queued):
            self._add(seq, bank, items, _epoch(created))

    def busy(self, bank: str) -> bool:
        """Entries of ``bank`` wait: a new write goes behind them, not past them."""
        return self._banks[bank] > 0

    def _add(self, seq: int, bank: str, items: int, since: float) -> None:
        if seq not in self._queued:
            self._queued[seq] = (bank, items, since)
            self._items += items
            self._banks[bank] += 1

    def _remove(self, seq: int) -> None:
        found = self._queued.pop(seq, None)
        if found is not None:
            self._items -= found[1]
            self._banks[found[0]] -= 1

    def depth(self) -> tuple[int, int, float | None]:
        """(entries, items, oldest age in seconds) queued. O(1): a check on every governed write."""
        if not self._queued:
            return 0, 0, None
        oldest = next(iter(self._queued.values()))[2]
        return len(self._queued), self._items, max(0.0, time.time() - oldest)

    def check_room(self) -> None:
        """Raise :class:`OutboxFull` when the queue is past a limit."""
        if not self._queued:
            return
        _, items, age = self.depth()
        if items >= self.settings.max_items:
            raise OutboxFull(
                f"the delivery outbox holds {items} items waiting for the backend (limit {self.settings.max_items})"
            )
        if age is not None and age >= self.settings.max_age:
            raise OutboxFull(
                f"the oldest write in the delivery outbox has waited {age:.0f} s for the backend"
                f" (limit {self.settings.max_age:.0f} s)"
            )

    def queued(self, entry: rows.Entry) -> None:
        """``entry`` is queued: count it and make sure its bank's worker runs."""
        self._add(entry.seq, entry.bank, entry.items, time.time())
        self.wake(entry.bank)

    def wake(self, bank: str) -> None:
        if self._stopping:
            return
        self._wake.setdefault(bank, asyncio.Event()).set()
        worker = self._workers.get(bank)
        if worker is None or worker.done():
            # In a context of its own: not the log context of the request that happened to wake it.
            loop = asyncio.get_running_loop()
            self._workers[bank] = loop.create_task(self._drain(bank), context=contextvars.Context())

    def start(self) -> None:
        for bank in {b for b, _, _ in self._queued.values()}:
            self.wake(bank)

    async def stop(self, grace: float) -> None:
        """Stop delivering: a delivery in flight may finish within ``grace`` seconds, then it is
        cancelled (its entry stays queued and is delivered again at the next start)."""
        self._stopping = True
        for event in self._wake.values():
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
        counts = await self.state.ledger.read(lambda db: rows.counts(db, bank))
        queued = {s: e for s, e in self._queued.items() if bank is None or e[0] == bank}
        oldest = min((created for _, _, created in queued.values()), default=None)
        full = None
        try:
            self.check_room()
        except OutboxFull as exc:
            full = str(exc)
        return Summary(
            queued_entries=len(queued),
            queued_items=sum(i for _, i, _ in queued.values()),
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
        try:
            while not self._stopping:
                entry = await self.state.ledger.read(lambda db: rows.first_queued(db, bank))
                if entry is None:
                    return
                await self._deliver_with_retries(entry)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must not end deliveries silently: logged, the worker starts again later
            log.exception("outbox_worker_failed", bank=bank)

    async def _sleep(self, bank: str, seconds: float) -> None:
        """Backoff that a retry-now (or a stop) cuts short."""
        event = self._wake.setdefault(bank, asyncio.Event())
        event.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout=seconds)

    async def _deliver_with_retries(self, entry: rows.Entry) -> None:
        try:
            got = parcel(entry)
        except Corrupt as exc:
            log.error("outbox_corrupt_row", seq=entry.seq, bank=entry.bank, error=str(exc))
            await self._dead(entry, [], None, str(exc))
            return

        async def before_sleep(retry: RetryCallState) -> None:
            error = retry.outcome.exception() if retry.outcome else None
            await self.state.ledger.write(lambda db: rows.attempted(db, entry.seq, str(error)))
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
            async for attempt in retrying:
                with attempt:
                    current = await self.state.ledger.read(lambda db: rows.find(db, entry.operation_id))
                    if current is None or current.state != "queued":  # given up or settled meanwhile
                        self._remove(entry.seq)
                        return
                    await self.deliver(got, attempts=entry.attempts + attempt.retry_state.attempt_number)
        except (BackendUnavailable, GateClosed):  # stopping: the entry stays queued
            return

    async def deliver(
        self, got: Parcel, *, attempts: int, source: str = "outbox", action: str = "deliver", reason: str = ""
    ) -> None:
        """One delivery of a queued entry; settles it (delivered, or dead on a 4xx). Raises
        :class:`BackendUnavailable` (or :class:`GateClosed`) when it may be tried again."""
        state, entry = self.state, got.entry
        self._inflight.add(entry.seq)  # an operator's give-up waits for it
        try:
            async with state.gates.writing(entry.bank, state.settings.config_guard.write_wait):
                try:
                    receipt = await state.memory.retain(
                        entry.bank, got.items, document_tags=got.document_tags, wait=False
                    )
                except BackendRejected as exc:
                    if transient(exc.status):
                        raise BackendUnavailable(f"the backend answered {exc.status}", status=exc.status) from exc
                    await self._dead(entry, got.memory_ids, exc.status, json.dumps(exc.body, ensure_ascii=False))
                    return
                said = reason or f"delivered from the outbox (operation {entry.operation_id}, attempt {attempts})"
                change = Change("pending", "active", action, source, entry.request_id, "memwarden", reason=said)

                def settle(db: Connection) -> None:
                    move(db, entry.bank, got.memory_ids, change)
                    mark_delivered(
                        db,
                        bank=entry.bank,
                        memory_ids=got.memory_ids,
                        supersede=got.supersede,
                        request_id=entry.request_id,
                        actor=entry.actor,
                    )
                    # An entry the client was told about keeps answering its operation id a while.
                    keep = entry.state == "queued"
                    rows.delivered(db, entry.seq, keep=keep, backend_operation_id=receipt.operation_id)

                await state.ledger.write(settle)
        finally:
            self._inflight.discard(entry.seq)
        self._remove(entry.seq)
        state.metrics.outbox_delivered.inc()
        log.info("outbox_delivered", bank=entry.bank, operation_id=entry.operation_id, items=entry.items)
        from memwarden.governance.review import retire

        for _, old_id in got.supersede:
            await retire(state, entry.bank, old_id)

    async def _dead(self, entry: rows.Entry, memory_ids: list[str], status: int | None, answer: str) -> None:
        said = f"the backend refused the delivery with {status}" if status is not None else answer

        def settle(db: Connection) -> None:
            mark_failed(
                db,
                bank=entry.bank,
                memory_ids=memory_ids,
                reason=said,
                request_id=entry.request_id,
                actor="memwarden",
                source="outbox",
            )
            rows.settle(db, entry.seq, "dead", answer=answer if status is not None else None, error=said)
            append_events(db, [_entry_event(entry, "outbox_dead", "memwarden", said)])

        await self.state.ledger.write(settle)
        self._remove(entry.seq)
        self.state.metrics.outbox_dead.inc()
        log.warning("outbox_dead_letter", bank=entry.bank, operation_id=entry.operation_id, reason=said)

    # -- an operator's actions ------------------------------------------------------------------

    async def retry(self, operation_id: str, *, actor: str, request_id: str) -> rows.Entry:
        """Deliver now: a queued entry's backoff is cut short; a dead or given-up one is queued again
        (its memories back to ``pending``), at the end of its bank's queue."""
        entry = await self._entry(operation_id)
        if entry.state == "delivered":
            raise Refused(409, f"operation {operation_id} was delivered already")
        if entry.state in ("dead", "given_up"):
            memory_ids = _memory_ids(entry)
            change = Change("failed", "pending", "requeue", "admin", request_id, actor, reason="delivery retried")

            def requeue(db: Connection) -> rows.Entry | None:
                move(db, entry.bank, memory_ids, change)
                rows.requeue(db, entry.seq)
                append_events(
                    db, [_entry_event(entry, "outbox_retry", actor, "queued again by an operator", request_id)]
                )
                return rows.find(db, operation_id)

            again = await self.state.ledger.write(requeue)
            assert again is not None
            self.queued(again)
            return again
        if entry.state == "queued":
            self.wake(entry.bank)
        return entry

    async def give_up(self, operation_id: str, *, actor: str, request_id: str) -> rows.Entry:
        """Stop trying: the entry's memories become ``failed`` (audited); the entry stays, retryable."""
        entry = await self._entry(operation_id)
        if entry.seq in self._inflight:
            raise Refused(409, f"operation {operation_id} is being delivered right now; look again in a moment")
        if entry.state not in ("queued", "dead"):
            raise Refused(409, f"operation {operation_id} is {entry.state}; only a queued or dead one can be given up")
        reason = f"delivery given up by {actor}"
        frm = "failed" if entry.state == "dead" else "pending"

        def settle(db: Connection) -> rows.Entry | None:
            mark_failed(
                db,
                bank=entry.bank,
                memory_ids=_memory_ids(entry),
                reason=reason,
                request_id=request_id,
                actor=actor,
                source="admin",
                action="give_up",
                frm=frm,
            )
            rows.settle(db, entry.seq, "given_up", answer=None, error=reason)
            append_events(db, [_entry_event(entry, "outbox_give_up", actor, reason, request_id)])
            return rows.find(db, operation_id)

        settled = await self.state.ledger.write(settle)
        self._remove(entry.seq)
        self._wake.setdefault(entry.bank, asyncio.Event()).set()  # its worker moves on
        assert settled is not None
        return settled

    async def _entry(self, operation_id: str) -> rows.Entry:
        entry = await self.state.ledger.read(lambda db: rows.find(db, operation_id))
        if entry is None:
            raise Refused(404, f"no outbox entry {operation_id}")
        return entry


def _memory_ids(entry: rows.Entry) -> list[str]:
    try:
        return [str(m) for m in json.loads(entry.memory_ids)]
    except ValueError:
        return []


def _entry_event(entry: rows.Entry, action: str, actor: str, reason: str, request_id: str | None = None) -> AuditEvent:
    return AuditEvent(
        action=action,
        bank=entry.bank,
        actor=actor,
        source="outbox",
        reason=reason,
        after={"operation_id": entry.operation_id, "items": entry.items, "state": entry.state},
        request_id=request_id or entry.request_id,
    )
