"""An operator's actions on the outbox (``/warden/outbox``): retry an entry now, or give it up.

They share the outbox's per-bank lock with its workers, and every state change is a
compare-and-set in the database, so a retry, a give-up and a delivery racing each other — on this
instance or another on the same database — change an entry once. :class:`OperatorActions` is a
part of :class:`~memwarden.governance.outbox.Outbox`, kept apart because the worker's loop and these
actions are read separately.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from memwarden.db import notices
from memwarden.db import outbox as rows
from memwarden.db.audit import append_events
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.deliveries import failed_among, mark_failed
from memwarden.db.memories import Change, move
from memwarden.governance.deliveries import entry_event, memory_ids_of
from memwarden.governance.errors import Refused


class OperatorActions(ABC):
    """Retry and give-up, over the outbox's state (what :class:`Outbox` defines: a class that does
    not define these methods cannot be made)."""

    ledger: Database
    _inflight: set[int]  # entries being delivered on this instance right now

    @abstractmethod
    def _lock(self, bank: str) -> asyncio.Lock: ...

    @abstractmethod
    def _remove(self, bank: str, seq: int) -> None: ...

    @abstractmethod
    def poke(self, bank: str) -> None: ...

    @abstractmethod
    def queued(self, entry: rows.Entry) -> None: ...

    async def retry(self, operation_id: str, *, actor: str, request_id: str) -> rows.Entry:
        """Deliver now: a queued entry's backoff is cut short; a dead or given-up one is queued again
        (its memories back to ``pending``), at the end of its bank's queue. Audited either way."""
        entry = await self._entry(operation_id)
        async with self._lock(entry.bank):
            entry = await self._entry(operation_id)  # under the lock: as the worker left it
            if entry.state == "delivered":
                raise Refused(409, f"operation {operation_id} was delivered already")
            if entry.state == "sending":
                raise Refused(409, f"operation {operation_id} is being delivered by its request; look again shortly")
            if entry.state == "queued":
                event = entry_event(entry, "outbox_retry", actor, "delivery attempted now", request_id, state="queued")

                def attempt_now(db: Connection) -> None:
                    append_events(db, [event])
                    notices.send(db, notices.POKE, self.ledger.instance_id, entry.bank)  # its worker may run elsewhere

                await self.ledger.write(attempt_now)
                self.poke(entry.bank)
                return entry
            memory_ids = memory_ids_of(entry)
            still_failed = await self.ledger.read(lambda db: failed_among(db, memory_ids))
            if memory_ids and not still_failed:
                raise Refused(409, f"operation {operation_id}'s memories were delivered by a later retain since")
            change = Change("failed", "pending", "requeue", "admin", request_id, actor, reason="delivery retried")
            said = "queued again by an operator"

            def requeue(db: Connection) -> rows.Entry | None:
                if not rows.requeue(db, entry.seq):
                    return None
                move(db, entry.bank, still_failed, change)
                append_events(db, [entry_event(entry, "outbox_retry", actor, said, request_id, state="queued")])
                notices.send(db, notices.POKE, self.ledger.instance_id, entry.bank)
                return rows.find(db, operation_id)

            again = await self.ledger.write(requeue)
            if again is None:
                raise Refused(409, f"operation {operation_id} changed meanwhile; look again")
            self.queued(again)
            return again

    async def give_up(self, operation_id: str, *, actor: str, request_id: str) -> rows.Entry:
        """Stop trying: the entry's memories become ``failed`` (audited); the entry stays, retryable."""
        entry = await self._entry(operation_id)
        if entry.seq in self._inflight:
            raise Refused(409, f"operation {operation_id} is being delivered right now; look again in a moment")
        async with self._lock(entry.bank):
            entry = await self._entry(operation_id)
            if entry.state not in ("queued", "dead"):
                raise Refused(
                    409, f"operation {operation_id} is {entry.state}; only a queued or dead one can be given up"
                )
            reason = f"delivery given up by {actor}"
            frm = "failed" if entry.state == "dead" else "pending"

            def settle(db: Connection) -> rows.Entry | str | None:
                elsewhere = rows.attempted_elsewhere(db, entry.seq, self.ledger.instance_id)
                if elsewhere is not None:
                    return elsewhere
                if not rows.settle(db, entry.seq, "given_up", answer=None, error=reason, frm=(entry.state,)):
                    return None
                mark_failed(
                    db,
                    bank=entry.bank,
                    memory_ids=memory_ids_of(entry),
                    reason=reason,
                    request_id=request_id,
                    actor=actor,
                    source="admin",
                    action="give_up",
                    frm=frm,
                )
                event = entry_event(entry, "outbox_give_up", actor, reason, request_id, state="given_up")
                append_events(db, [event])
                notices.send(db, notices.POKE, self.ledger.instance_id, entry.bank)
                return rows.find(db, operation_id)

            settled = await self.ledger.write(settle)
            if isinstance(settled, str):
                raise Refused(
                    409,
                    f"operation {operation_id} is being delivered right now by instance {settled};"
                    " look again in a moment",
                )
            if settled is None:
                raise Refused(409, f"operation {operation_id} changed meanwhile; look again")
            self._remove(entry.bank, entry.seq)
            self.poke(entry.bank)  # its worker moves on
            return settled

    async def _entry(self, operation_id: str) -> rows.Entry:
        entry = await self.ledger.read(lambda db: rows.find(db, operation_id))
        if entry is None:
            raise Refused(404, f"no outbox entry {operation_id}")
        return entry
