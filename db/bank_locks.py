"""Per-bank locks shared by the instances on one PostgreSQL: transaction-scoped advisory locks, each
held on a pooled connection inside an open transaction (released at its COMMIT, or when the
connection dies with its instance).

A governed write holds its bank's lock **shared** for its span; a guarded config change holds it
**exclusive** from its snapshot to its verification — it waits for the writes in flight on every
instance, and PostgreSQL queues later shared requests behind a waiting exclusive one, so a stream
of writes cannot starve a change, and writes that arrive meanwhile wait (``governance/locks.py``
bounds the wait). psycopg's asyncio connections, from psycopg_pool's pool.
"""

from __future__ import annotations

import hashlib
from typing import Any

import psycopg
import structlog
from psycopg import errors
from psycopg_pool import AsyncConnectionPool

from memwarden.db.common import LockTimeout
from memwarden.db.postgres import KEEPALIVES

NAMESPACE = 0x6D77  # "mw": the first key of every bank gate (pg_advisory_xact_lock(int, int))
# "ms": the first key of every bank's serial lock — its config changes and destructive operations
# (archive, restore, erase, plans, retention) one at a time across the instances; always taken
# before the gate's, never after (governance/locks.py).
SERIAL = 0x6D73
CONNECT_TIMEOUT = 10.0

log = structlog.get_logger("memwarden.bank_locks")


def bank_key(bank: str) -> int:
    """The bank's lock key: 32 bits of its SHA-256 (two banks that share one wait for each other,
    which is all a collision costs)."""
    return int.from_bytes(hashlib.sha256(bank.encode()).digest()[:4], "big", signed=True)


class SharedBankLocks:
    """The advisory locks; :meth:`open` before use, :meth:`close` after."""

    def __init__(self, url: str, *, max_size: int, holders: str = "writes in flight") -> None:
        self.holders = holders  # what holds its connections (said when none is free)
        self.pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            open=False,
            kwargs={"autocommit": True, "connect_timeout": int(CONNECT_TIMEOUT), **KEEPALIVES},
            configure=_configure,
        )

    async def open(self) -> None:
        await self.pool.open(wait=True, timeout=CONNECT_TIMEOUT)

    async def close(self) -> None:
        await self.pool.close()

    async def acquire(
        self, bank: str, *, exclusive: bool, wait: float | None, namespace: int = NAMESPACE
    ) -> psycopg.AsyncConnection[Any]:
        """Hold ``bank``'s lock in ``namespace`` (its gate, or :data:`SERIAL`) until :meth:`release`:
        the connection holding it. Raises :class:`LockTimeout` when it, or a connection, is not had
        within ``wait`` seconds."""
        bound = wait if wait is not None else CONNECT_TIMEOUT * 6
        try:
            conn = await self.pool.getconn(timeout=bound)
        except Exception as exc:  # psycopg_pool.PoolTimeout, or the server gone
            raise LockTimeout(
                f"no free connection to PostgreSQL for bank '{bank}''s lock within {bound:.0f} s"
                f" ({self.pool.max_size} {self.holders} at most per instance): {type(exc).__name__}"
            ) from None
        try:
            await conn.execute("BEGIN")
            if wait is not None:
                await conn.execute(f"SET LOCAL lock_timeout = {max(1, int(wait * 1000))}")
            kind = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
            await conn.execute(f"SELECT {kind}(%s, %s)", (namespace, bank_key(bank)))
        except errors.LockNotAvailable:
            await self._give_back(conn)
            raise LockTimeout(
                f"a guarded config change on bank '{bank}' (on this or another instance) held it for {bound:.0f} s"
            ) from None
        except BaseException:
            await self._give_back(conn)
            raise
        return conn

    async def release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await self._give_back(conn, commit=True)

    async def _give_back(self, conn: psycopg.AsyncConnection[Any], *, commit: bool = False) -> None:
        try:
            if conn.closed or conn.broken:
                if commit:  # the lock went with the connection before its holder was done
                    log.warning("bank_lock_connection_lost")
            else:
                await conn.execute("COMMIT" if commit else "ROLLBACK")
        except psycopg.Error as exc:  # the pool checks a returned connection and drops a broken one
            if commit:
                log.warning("bank_lock_release_failed", error=type(exc).__name__)
        finally:
            await self.pool.putconn(conn)


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    """A lock is held inside an open transaction for as long as its holder needs (a reembed, a
    config change's verification): no server or role default may end it as idle, and a lock
    without a bound of ours waits as long as it takes (ours is set per transaction)."""
    await conn.execute("SET idle_in_transaction_session_timeout = 0")
    await conn.execute("SET lock_timeout = 0")
