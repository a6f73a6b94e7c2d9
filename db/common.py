"""Timestamps and batching shared by the repositories."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime


class DatabaseError(Exception):
    """The database cannot be opened or used (corrupt, locked, unreachable, not a memwarden database)."""


class LockTimeout(Exception):
    """A lock shared with other instances was not granted within the time given (``db/bank_locks.py``)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def chunked(values: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    """``values`` in runs of at most ``size``: one ``IN (?, …)`` list each, under SQLite's limit on
    bound parameters."""
    for i in range(0, len(values), size):
        yield values[i : i + size]


# The connection type the layers above name in their transaction functions: they compose
# transactions from the repositories' functions, and never write SQL of their own. What those
# functions return is a record (``db/records.py``) or plain values, never a row.
Connection = sqlite3.Connection


def on_postgres(db: object) -> bool:
    """Whether ``db`` is PostgreSQL's connection (``db/postgres.PgConnection``), not SQLite's."""
    return getattr(db, "dialect", "sqlite") == "postgresql"


def has_table(db: sqlite3.Connection, name: str) -> bool:
    """Whether the database holds a table ``name`` (on either engine)."""
    if on_postgres(db):
        return bool(db.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0])
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None
