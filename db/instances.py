"""The memwarden instances sharing one database. Each registers at start; on PostgreSQL it also
holds, for its whole life, a session-scoped advisory lock of its own on a connection of its own
(:data:`LOCK_NAMESPACE`, :func:`lock_key`): an instance is **alive while its lock is held** —
PostgreSQL lets go of it the moment that connection ends (the process killed, its host gone: TCP
keepalives bound how long a silent host takes). No clock is compared, and no write queue can make
a live instance look dead. The work a dead instance held — outbox entries it was delivering or had
claimed — is another's to finish (``db/outbox.py``).

On SQLite only one process can write the file: every instance but this one is dead, and the others'
rows are dropped at start (:func:`register` with ``exclusive``)."""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass

from memwarden.db import notices
from memwarden.db.common import Connection, now, on_postgres

HEARTBEAT = 2.0  # seconds between two looks at the others (and at this one's own lock)
LOCK_NAMESPACE = 0x6D69  # "mi": the first key of every instance's lock (pg_advisory_lock(int, int))


def lock_key(instance_id: str) -> int:
    """The instance's lock key: 31 bits of its id's SHA-256 (non-negative: pg_locks.objid is an oid)."""
    return int.from_bytes(hashlib.sha256(instance_id.encode()).digest()[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class Instance:
    id: str
    host: str
    pid: int
    started_at: str


def live_ids(db: Connection) -> str:
    """SQL selecting the ids of the live instances (for ``owner IN (…)``)."""
    if not on_postgres(db):
        return "SELECT id FROM instances"  # SQLite: only this process (register(exclusive=True))
    return (
        "SELECT i.id FROM instances i JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted"  # noqa: S608
        f" AND l.classid = {LOCK_NAMESPACE} AND l.objid::bigint = i.lock_key AND l.objsubid = 2"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )


def hold(db: Connection, instance_id: str) -> None:
    """Take this instance's lock on ``db``, a connection of its own kept for its life (PostgreSQL)."""
    db.execute("SELECT pg_advisory_lock(?, ?)", (LOCK_NAMESPACE, lock_key(instance_id)))


def register(db: Connection, instance_id: str, *, exclusive: bool) -> None:
    """Record this instance (``exclusive``: the only one there can be — the others' rows are gone)."""
    if exclusive:
        db.execute("DELETE FROM instances")
    db.execute(
        "INSERT INTO instances (id, host, pid, started_at, seen_at, lock_key) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO NOTHING",
        (instance_id, socket.gethostname()[:200], os.getpid(), now(), now(), lock_key(instance_id)),
    )


def deregister(db: Connection, instance_id: str) -> None:
    db.execute("DELETE FROM instances WHERE id = ?", (instance_id,))


def leave(db: Connection, instance_id: str) -> None:
    """This instance stops: no longer live to the others, who are told (``db/notices.py``) and take
    over what it held at once rather than at their next beat."""
    deregister(db, instance_id)
    notices.send(db, notices.LEFT, instance_id)


def live(db: Connection) -> list[Instance]:
    return [
        Instance(r["id"], r["host"], int(r["pid"]), r["started_at"])
        for r in db.execute(
            f"SELECT id, host, pid, started_at FROM instances WHERE id IN ({live_ids(db)}) ORDER BY started_at"  # noqa: S608
        )
    ]


def forget_dead(db: Connection) -> list[str]:
    """Drop the rows of dead instances; their ids."""
    dead = [r[0] for r in db.execute(f"SELECT id FROM instances WHERE id NOT IN ({live_ids(db)})")]  # noqa: S608
    for instance_id in dead:
        deregister(db, instance_id)
    return dead


def running(db: Connection) -> list[Instance]:
    """The instances running on the database now, for a command that needs it to itself
    (``memwarden migrate-state``): on PostgreSQL those holding their lock; on SQLite the one whose
    row names a process alive on this machine (a row left by one killed is not)."""
    if on_postgres(db):
        return live(db)
    return [
        Instance(r["id"], r["host"], int(r["pid"]), r["started_at"])
        for r in db.execute("SELECT id, host, pid, started_at FROM instances")
        if r["host"] == socket.gethostname()[:200] and _alive(int(r["pid"]))
    ]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
