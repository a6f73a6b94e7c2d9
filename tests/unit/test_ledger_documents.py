"""A document's memories are found by their document, not by reading the whole bank.

A delivery supersedes the earlier memories of the documents it replaces (``replace_documents``), an
approval or a restore looks for a memory's siblings (``active_siblings``): each asks the ledger for
one document's memories. With only a (bank, document_id) index, SQLite read every active memory of
the bank for each document instead (1.1 s for a retain of 100 items with documents into a bank of
50,000). The work is counted in SQLite's virtual-machine steps (its progress handler), not timed: it
must not grow with the bank.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from memwarden.db.deliveries import replace_documents
from memwarden.db.memory_reads import active_siblings
from memwarden.db.migrations import LEDGER_MIGRATIONS, migrate
from memwarden.db.sqlite import connect

NOW = "2026-12-07T00:00:00Z"
INSERT = (
    "INSERT INTO memories (id, bank, status, content, content_hash, document_id, item, created_at, updated_at)"
    " VALUES (?, ?, 'active', ?, ?, ?, '{}', ?, ?)"
)


def _ledger(path: Path, others: int) -> sqlite3.Connection:
    """A bank with ``others`` active memories of other documents, and ten new ones, each of its own
    new document, plus one document with two memories (an earlier and a later one)."""
    db = connect(path)
    migrate(db, LEDGER_MIGRATIONS)
    with db:
        db.executemany(INSERT, [(f"m{i}", "b", f"fact {i}", f"h{i}", f"d{i}", NOW, NOW) for i in range(others)])
        db.executemany(INSERT, [(f"new{i}", "b", f"new {i}", f"n{i}", f"nd{i}", NOW, NOW) for i in range(10)])
        db.executemany(INSERT, [(f"sib{i}", "b", f"sib {i}", f"s{i}", "shared", NOW, NOW) for i in range(2)])
    return db


def _steps(db: sqlite3.Connection, work: Callable[[], object]) -> int:
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    db.set_progress_handler(count, 100)
    try:
        work()
    finally:
        db.set_progress_handler(None, 100)
    return counted[0]


def test_finding_a_documents_memories_does_not_read_the_bank(tmp_path: Path) -> None:
    work: dict[int, tuple[int, int]] = {}
    for others in (100, 1000):
        db = _ledger(tmp_path / f"ledger{others}.db", others)
        new = [f"new{i}" for i in range(10)]
        with db:
            delivered = _steps(
                db,
                lambda: replace_documents(db, bank="b", memory_ids=new, request_id="r", actor="a"),  # noqa: B023
            )
        siblings = _steps(db, lambda: active_siblings(db, "b", "shared", "sib0"))  # noqa: B023
        assert active_siblings(db, "b", "shared", "sib0") == ["sib1"]
        work[others] = (delivered, siblings)
        db.close()
    # Ten times the bank: the same work, within a step or two of rounding (it was ~10x before).
    for small, large in zip(work[100], work[1000], strict=True):
        assert large <= small + 2, work
