"""Per-bank locks: config changes and destructive operations on one bank run one at a time; and the
gate that keeps governed writes and a guarded config change on one bank apart."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from memwarden.db.common import LockTimeout
from memwarden.governance.errors import Busy

if TYPE_CHECKING:
    from memwarden.db.bank_locks import SharedBankLocks


class BankLocks:
    """One lock per bank: config changes and destructive operations on a bank run one at a time.
    With ``shared`` (instances on one PostgreSQL: ``db/bank_locks.py``), one at a time across every
    instance: past this process's lock, the bank's serial advisory lock is held too — taken before
    the bank's gate (a guarded change takes both), never after, so no two orders meet."""

    def __init__(self, shared: SharedBankLocks | None = None) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self.shared = shared
        self._held: dict[str, Any] = {}  # bank → the connection holding its serial lock

    def __call__(self, bank: str) -> BankLock:
        return BankLock(self, bank)

    def _local(self, bank: str) -> asyncio.Lock:
        lock = self._locks.get(bank)
        if lock is None:
            lock = self._locks[bank] = asyncio.Lock()
        return lock

    async def _acquire(self, bank: str) -> None:
        local = self._local(bank)
        await local.acquire()
        if self.shared is None:
            return
        from memwarden.db.bank_locks import SERIAL

        try:
            self._held[bank] = await self.shared.acquire(bank, exclusive=True, wait=None, namespace=SERIAL)
        except LockTimeout as exc:  # no connection for it (every one held a minute long), or the server gone
            local.release()
            raise Busy(str(exc)) from None
        except BaseException:
            local.release()
            raise

    async def _release(self, bank: str) -> None:
        held = self._held.pop(bank, None)
        try:
            if held is not None:
                assert self.shared is not None
                await self.shared.release(held)
        finally:  # also when the release is cancelled: this process's lock must not stay taken
            self._local(bank).release()


class BankLock:
    """``bank``'s lock: ``async with`` it, or :meth:`acquire` and :meth:`release` — from another
    task too (a profile change's verification, in the background, releases what its request took)."""

    __slots__ = ("bank", "locks")

    def __init__(self, locks: BankLocks, bank: str) -> None:
        self.locks, self.bank = locks, bank

    async def acquire(self) -> None:
        await self.locks._acquire(self.bank)

    async def release(self) -> None:
        await self.locks._release(self.bank)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


class GateClosed(Busy):
    """A governed write waited its bound for a guarded change on its bank to finish."""

    def __init__(self, bank: str, waited: float, why: str | None = None) -> None:
        super().__init__(
            why or f"a guarded config change on bank '{bank}' is still being verified after {waited:.0f} s"
        )
        self.bank, self.waited = bank, waited


class _Gate:
    __slots__ = ("changing", "cond", "queued", "writers")

    def __init__(self) -> None:
        self.cond = asyncio.Condition()
        self.writers = 0  # governed writes in flight
        self.queued = 0  # guarded changes waiting for the bank to be quiet
        self.changing = False  # a guarded change between its snapshot and its verification


class BankGates:
    """Governed writes and guarded config changes on one bank, kept apart.

    A guarded change (a client's config PATCH or reset, a bank profile change, the mission
    seeder) waits until the writes in flight on its bank have settled — the bank is quiet — then
    runs alone from its snapshot to its verification: a write the backend acknowledged during the
    change can then neither be lost by it unseen nor be mistaken for a loss. Writes that arrive
    meanwhile wait (a queued change goes first, so a burst of writes cannot starve it), at most
    ``bound`` seconds, then :class:`GateClosed` (answered ``503`` with ``Retry-After``).

    With ``shared`` (instances on one PostgreSQL: ``db/bank_locks.py``) the same holds across them:
    past this instance's gate, a write also holds the bank's advisory lock shared, and a change
    holds it exclusive — writes on every instance wait for a change on any."""

    def __init__(self, shared: SharedBankLocks | None = None) -> None:
        self._gates: dict[str, _Gate] = {}
        self.shared = shared
        self._held: dict[str, Any] = {}  # bank → the connection holding a change's exclusive lock

    def _gate(self, bank: str) -> _Gate:
        gate = self._gates.get(bank)
        if gate is None:
            gate = self._gates[bank] = _Gate()
        return gate

    def busy(self, bank: str) -> bool:
        """Whether a guarded change holds or awaits ``bank`` (a write would wait)."""
        gate = self._gates.get(bank)
        return gate is not None and (gate.changing or gate.queued > 0)

    @contextlib.asynccontextmanager
    async def writing(self, bank: str, bound: float) -> AsyncIterator[float]:
        """Hold ``bank`` for one governed write (waiting ``bound`` seconds at most for a guarded
        change); yields the seconds it waited."""
        gate = self._gate(bank)
        started = time.monotonic()
        async with gate.cond:
            try:
                async with asyncio.timeout(bound):  # never wait_for: it can swallow a cancel on 3.11
                    await gate.cond.wait_for(lambda: not gate.changing and gate.queued == 0)
            except TimeoutError:
                raise GateClosed(bank, time.monotonic() - started) from None
            gate.writers += 1
        held = None
        try:
            if self.shared is not None:
                left = bound - (time.monotonic() - started)
                try:
                    held = await self.shared.acquire(bank, exclusive=False, wait=max(0.001, left))
                except LockTimeout as exc:
                    raise GateClosed(bank, time.monotonic() - started, str(exc)) from None
            yield time.monotonic() - started
        finally:
            try:
                if held is not None:
                    assert self.shared is not None
                    await self.shared.release(held)
            finally:  # also when the release is cancelled: the bank's count must not stay up
                async with gate.cond:
                    gate.writers -= 1
                    gate.cond.notify_all()

    async def begin_change(self, bank: str) -> None:
        """Take ``bank`` alone for a guarded change, once its writes in flight have settled. The
        change must :meth:`end_change` (a change verified in the background ends there)."""
        gate = self._gate(bank)
        async with gate.cond:
            gate.queued += 1
            try:
                await gate.cond.wait_for(lambda: gate.writers == 0 and not gate.changing)
            finally:
                gate.queued -= 1
                gate.cond.notify_all()  # a write that waited on a cancelled change may go
            gate.changing = True
        if self.shared is not None:  # and the writes of the other instances
            try:
                self._held[bank] = await self.shared.acquire(bank, exclusive=True, wait=None)
            except BaseException:
                await self._open(bank)
                raise

    async def end_change(self, bank: str) -> None:
        held = self._held.pop(bank, None)
        try:
            if held is not None:
                assert self.shared is not None
                await self.shared.release(held)
        finally:
            await self._open(bank)

    async def _open(self, bank: str) -> None:
        gate = self._gate(bank)
        async with gate.cond:
            gate.changing = False
            gate.cond.notify_all()

    @contextlib.asynccontextmanager
    async def changing(self, bank: str) -> AsyncIterator[None]:
        """:meth:`begin_change` … :meth:`end_change` around a block."""
        await self.begin_change(bank)
        try:
            yield
        finally:
            await self.end_change(bank)
