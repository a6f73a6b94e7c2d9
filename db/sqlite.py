"""memwarden's state in SQLite: the connections to the data folder's database file — the writer's
(WAL, checked, migrated, the file kept private), a reader's, and a read-only one for the command
line. PostgreSQL's are ``db/postgres.py``; ``db/database.py`` uses either."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from memwarden.db.audit import LedgerConnection
from memwarden.db.common import DatabaseError
from memwarden.db.migrations import LEDGER_MIGRATIONS, migrate

READER_MMAP_BYTES = 1 << 30  # address space only: SQLite maps no more than the file
READER_CACHE_KIB = 16 * 1024


def connect(path: Path) -> LedgerConnection:
    db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False, factory=LedgerConnection)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA busy_timeout = 10000")
    db.execute("PRAGMA foreign_keys = ON")
    return db


def private(path: Path, mode: int) -> None:
    """``path`` readable by its owner alone (``mode``), when it exists and is ours."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        if path.stat().st_mode & 0o777 != mode:
            os.chmod(path, mode)


def open_writer(path: Path) -> LedgerConnection:
    """The one writer's connection: WAL, the file checked and migrated, and failing now, clearly,
    if another process holds the write lock. Raises ``sqlite3.DatabaseError``."""
    db = connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    integrity = db.execute("PRAGMA quick_check").fetchone()[0]
    if integrity != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {integrity}")
    migrate(db, LEDGER_MIGRATIONS)
    db.execute("BEGIN IMMEDIATE")
    db.execute("ROLLBACK")
    for suffix in ("", "-wal", "-shm"):  # SQLite gives the WAL and shared-memory files the database's mode
        private(path.with_name(path.name + suffix), 0o600)
    return db


def open_reader(path: Path) -> LedgerConnection:
    """A reader's connection (query only)."""
    db = connect(path)
    db.execute("PRAGMA query_only = ON")
    # Reads through a memory map and a larger page cache: fetching the ~200 rows a recall returns
    # at 100,000 memories took 4.3 ms with read() calls, 1.7 ms this way (measured).
    db.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
    db.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    return db


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the database at ``path`` (which exists), for reading it while a
    server may be writing it (the command line's ``--data-dir`` modes); :class:`DatabaseError` when
    it is not memwarden's database."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        db.execute("SELECT 1 FROM audit_events LIMIT 1")
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"{path} cannot be read as memwarden's database: {exc}") from None
    return db
