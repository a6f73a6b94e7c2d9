"""The memwarden instances sharing one database: each registers at start and says it is alive
(``seen_at``) every few seconds; one that has not for :data:`TTL` seconds is dead, and the work it
held — outbox entries it was delivering or had claimed — is another's to finish.

On SQLite only one process can write the file, so at start every other registration is stale and
dropped (:func:`register` with ``exclusive``)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memwarden.db.common import Connection, now

HEARTBEAT = 2.0  # seconds between an instance's "alive"
TTL = 10.0  # seconds without one: the instance is dead


@dataclass(frozen=True)
class Instance:
    id: str
    host: str
    pid: int
    started_at: str
    seen_at: str


def cutoff(ttl: float = TTL) -> str:
    """The ``seen_at`` before which an instance is dead."""
    return (datetime.now(UTC) - timedelta(seconds=ttl)).isoformat(timespec="microseconds")


def register(db: Connection, instance_id: str, *, exclusive: bool) -> None:
    """Record this instance (``exclusive``: the only one there can be — the others' rows are gone)."""
    if exclusive:
        db.execute("DELETE FROM instances")
    ts = now()
    db.execute(
        "INSERT INTO instances (id, host, pid, started_at, seen_at) VALUES (?, ?, ?, ?, ?)",
        (instance_id, socket.gethostname()[:200], os.getpid(), ts, ts),
    )


def alive(db: Connection, instance_id: str) -> bool:
    """Say this instance is alive; False when its row was gone (another instance found it dead
    and took its work: the caller registers again)."""
    return db.execute("UPDATE instances SET seen_at = ? WHERE id = ?", (now(), instance_id)).rowcount == 1


def deregister(db: Connection, instance_id: str) -> None:
    db.execute("DELETE FROM instances WHERE id = ?", (instance_id,))


def live(db: Connection, ttl: float = TTL) -> list[Instance]:
    return [
        Instance(r["id"], r["host"], int(r["pid"]), r["started_at"], r["seen_at"])
        for r in db.execute(
            "SELECT id, host, pid, started_at, seen_at FROM instances WHERE seen_at >= ? ORDER BY started_at",
            (cutoff(ttl),),
        )
    ]


def forget_dead(db: Connection, ttl: float = TTL) -> list[str]:
    """Drop the rows of dead instances; their ids."""
    dead = [r[0] for r in db.execute("SELECT id FROM instances WHERE seen_at < ?", (cutoff(ttl),))]
    if dead:
        db.execute("DELETE FROM instances WHERE seen_at < ?", (cutoff(ttl),))
    return dead
