"""The self-hosted store's tables in ``memwarden migrate-state`` (``db/state_transfer.py``): moved
with memwarden's own state, in the same transaction, counted and checked like it.

Every table of the store's schema is copied row for row, except what each engine derives from the
rows itself — SQLite's full-text index (FTS5) and PostgreSQL's posting list (``store_terms``) are
filled by their triggers as the memories are written on the target — and the one column the engines
keep differently: a memory's vector is a float32 BLOB on SQLite (``embedding``) and pgvector's
``embedding_v`` on PostgreSQL (``store/schema_postgres.py``), converted on the way, the same float32
values. pgvector's HNSW index is made when the first instance attaches to the target (as for any
store on PostgreSQL); SQLite's vector index is built in memory at first use."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from memwarden.db.common import Connection, has_table, on_postgres
from memwarden.db.migrations import migrate
from memwarden.db.state_transfer import Row, TransferError
from memwarden.store.pg_vectors import literal
from memwarden.store.schema import STORE_MIGRATIONS

# What an engine derives from store_units itself, rebuilt on the target by its triggers.
DERIVED = ("store_units_fts", "store_units_vocab", "store_terms")


@lru_cache(maxsize=1)
def store_tables() -> tuple[str, ...]:
    """The store's tables, in the order its migrations create them (those of a fresh schema)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(db, STORE_MIGRATIONS)
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY rowid"
        ).fetchall()
    finally:
        db.close()
    names = [r[0] for r in rows]
    return tuple(n for n in names if n != "schema_migrations" and not n.startswith(("sqlite_", *DERIVED)))


def _vector_blob(text: Any) -> bytes | None:
    """pgvector's text form (``[0.1,0.2,…]``) as SQLite keeps a vector: float32 bytes."""
    if text is None:
        return None
    try:
        return np.array(str(text).strip("[]").split(","), dtype=np.float32).tobytes()
    except ValueError as exc:
        raise TransferError(f"store_units: a vector that is not pgvector's ({exc})") from None


def _vector_text(blob: Any) -> str | None:
    """A float32 BLOB as pgvector's text form."""
    if blob is None:
        return None
    data = bytes(blob)
    if not data or len(data) % 4:
        raise TransferError(f"store_units: a vector of {len(data)} bytes is not float32 values")
    return literal(np.frombuffer(data, dtype=np.float32))


class StoreTables:
    """The store's part of a move (``db/state_transfer.MoreTables``)."""

    tables = store_tables()

    def present(self, db: Connection) -> bool:
        return any(has_table(db, t) and db.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in self.tables)  # noqa: S608

    def prepare(self, db: Connection) -> None:
        migrate(db, STORE_MIGRATIONS)

    def adapt(
        self, table: str, columns: list[str], src: Connection, dst: Connection
    ) -> tuple[list[str], Callable[[Row], Row]] | None:
        if table != "store_units" or on_postgres(src) == on_postgres(dst):
            return None
        if on_postgres(dst):  # SQLite's BLOB becomes pgvector's column (the BLOB is dropped there)
            blob = columns.index("embedding")
            return [*columns, "embedding_v"], lambda row: (*row, _vector_text(row[blob]))
        vector, blob = columns.index("embedding_v"), columns.index("embedding")
        kept = [i for i, c in enumerate(columns) if c != "embedding_v"]

        def to_sqlite(row: Row) -> Row:
            values = list(row)
            if values[vector] is not None:
                values[blob] = _vector_blob(values[vector])
            return tuple(values[i] for i in kept)

        return [columns[i] for i in kept], to_sqlite

    def check(self, src: Connection, dst: Connection) -> None:
        """The memories with a vector, and the full-text index, are the source's."""
        if _with_vectors(src) != _with_vectors(dst):
            raise TransferError(
                f"store_units: {_with_vectors(src)} memories with a vector on the source, {_with_vectors(dst)}"
                " on the target"
            )
        rows = int(dst.execute("SELECT COUNT(*) FROM store_units").fetchone()[0])
        if _indexed(dst) != rows:
            raise TransferError(
                f"store_units: the target's full-text index holds {_indexed(dst)} of its {rows} memories"
            )


def _with_vectors(db: Connection) -> int:
    column = "embedding_v" if on_postgres(db) else "embedding"
    return int(db.execute(f"SELECT COUNT(*) FROM store_units WHERE {column} IS NOT NULL").fetchone()[0])  # noqa: S608


def _indexed(db: Connection) -> int:
    """The memories the full-text index holds (as the health report counts them, ``store/stats.py``):
    on PostgreSQL each with terms has postings; on SQLite FTS5 keeps a size per memory."""
    if on_postgres(db):
        missing = db.execute(
            "SELECT COUNT(*) FROM store_units u WHERE u.term_count > 0"
            " AND NOT EXISTS (SELECT 1 FROM store_terms t WHERE t.seq = u.seq)"
        ).fetchone()[0]
        return int(db.execute("SELECT COUNT(*) FROM store_units").fetchone()[0]) - int(missing)
    return int(db.execute("SELECT COUNT(*) FROM store_units_fts_docsize").fetchone()[0])
