"""A bank's vectors on PostgreSQL: pgvector's column and HNSW index, searched in the database.

On SQLite each instance keeps a bank's vectors in memory (:mod:`store.vectors`); on PostgreSQL
several instances write the same banks, so the database answers the search: ``embedding_v``
(written by every write of a vector, :func:`value`; the float32 BLOB SQLite keeps beside it is
dropped by a trigger, ``store/schema_postgres.py``) holds the vector, and
an HNSW index per embedder — an expression index over ``embedding_v::vector(dim)``, partial on the
embedder's name, made once by whichever instance attaches first (:func:`ensure_index`) — serves
the nearest neighbours by inner product (the vectors are normalized: cosine similarity).

A search filters by bank and state. PostgreSQL's planner reads a small bank's rows through the
bank's B-tree and sorts them (exact), a large one's through the graph; pgvector's iterative scan
(``hnsw.iterative_scan``) goes on walking the graph until enough rows of the bank are found, so a
small bank among many is not left with too few neighbours. ``hnsw.ef_search`` is at least the
number of neighbours asked for (pgvector takes up to 1,000).
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memwarden.db.common import on_postgres
from memwarden.db.database import Database
from memwarden.store.embedder import Vector

HNSW_MAX_DIM = 2000  # pgvector's HNSW over `vector`: wider vectors are searched exactly
EF_SEARCH_MIN = 64  # as the in-memory graph's query_ef (store/vectors.py)
EF_SEARCH_MAX = 1000  # pgvector's bound
HNSW_M = 16  # as the in-memory graph's
HNSW_EF_CONSTRUCTION = 128


def literal(vector: Any) -> str:
    """A vector as pgvector's text form: ``[0.1,0.2,…]`` (each float32 widened to a double's digits:
    pgvector reads back the same float32)."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def value(db: sqlite3.Connection, vector: Any) -> tuple[str, str, tuple[Any, ...]]:
    """What a write of ``vector`` adds on PostgreSQL: the column, its placeholder and its value —
    or nothing on SQLite. ``vector``: an array, or the float32 BLOB."""
    if not on_postgres(db):
        return "", "", ()
    if isinstance(vector, bytes | bytearray | memoryview):
        vector = np.frombuffer(vector, dtype=np.float32)
    return ", embedding_v", ", ?::vector", (literal(vector),)


def assignment(db: sqlite3.Connection, vector: Any) -> tuple[str, tuple[Any, ...]]:
    """What an update of a row's vector to ``vector`` adds on PostgreSQL (``, embedding_v = …``)
    and its value — or nothing on SQLite. ``vector``: an array, the float32 BLOB, or None."""
    if not on_postgres(db):
        return "", ()
    if vector is None:
        return ", embedding_v = NULL", ()
    _, _, given = value(db, vector)
    return ", embedding_v = ?::vector", given


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def index_name(embedder: str, dim: int) -> str:
    return "store_units_hnsw_" + hashlib.sha256(f"{embedder}\0{dim}".encode()).hexdigest()[:12]


def ensure_index(db: sqlite3.Connection, embedder: str, dim: int) -> None:
    """The HNSW index of ``embedder``'s vectors (``dim`` wide), made if it is not there (none past
    :data:`HNSW_MAX_DIM`: those are searched exactly). Call inside a write transaction (one
    instance makes it, holding every instance's writes meanwhile; the others find it)."""
    if not 0 < dim <= HNSW_MAX_DIM:
        return
    db.execute(
        f"CREATE INDEX IF NOT EXISTS {index_name(embedder, dim)} ON store_units"
        f" USING hnsw ((embedding_v::vector({int(dim)})) vector_ip_ops)"
        f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        f" WHERE embedder = {_quoted(embedder)}"
    )


@dataclass
class Found:
    """One search: the ranking (memory id, similarity: best first), each hit's row key and token cost."""

    ranked: list[tuple[str, float]] = field(default_factory=list)
    seq: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


def iterative_scans(db: sqlite3.Connection) -> bool:
    """Whether the database's pgvector has iterative index scans (0.8 and later): before it, the
    ``hnsw.`` settings it does not know may not be set."""
    row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    try:
        return row is not None and tuple(int(p) for p in str(row[0]).split(".")[:2]) >= (0, 8)
    except ValueError:
        return False


def search(
    db: sqlite3.Connection, *, bank: str, embedder: str, dim: int, query: Vector, k: int, iterative: bool
) -> Found:
    """The ``k`` valid memories of ``bank`` nearest ``query`` among ``embedder``'s vectors."""
    if k <= 0:
        return Found()
    db.execute("SELECT set_config('hnsw.ef_search', ?, false)", (str(max(EF_SEARCH_MIN, min(k, EF_SEARCH_MAX))),))
    if iterative:
        db.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false)")
    column = f"embedding_v::vector({int(dim)})"
    rows = db.execute(
        f"SELECT id, seq, tokens, {column} <#> ?::vector({int(dim)}) AS d FROM store_units"  # noqa: S608
        f" WHERE embedder = {_quoted(embedder)} AND bank_id = ? AND state = 'valid' AND embedding_v IS NOT NULL"
        f" ORDER BY {column} <#> ?::vector({int(dim)}) LIMIT ?",
        (literal(query), bank, literal(query), k),
    ).fetchall()
    # (relaxed order: pgvector's iterative scan may answer a little out of order)
    best = sorted(rows, key=lambda r: (r[3], r[1]))
    return Found([(r[0], -float(r[3])) for r in best], {r[0]: r[1] for r in best}, {r[0]: r[2] for r in best})


class PgBankIndex:
    """A bank's vector index on PostgreSQL, answering as :class:`store.vectors.BankIndex` does
    where recall asks (its kind; nothing of it in memory: the rows' keys and costs come with each
    search); writes keep it in step by themselves (the column is written with the row)."""

    kind = "hnsw (pgvector)"

    def __init__(self, ledger: Database, bank: str, embedder: str, *, iterative: bool) -> None:
        self.ledger, self.bank, self.embedder, self.iterative = ledger, bank, embedder, iterative
        self.seq: dict[str, int] = {}
        self.tokens: dict[str, int] = {}

    async def search(self, query: Vector, k: int) -> Found:
        dim = len(query)  # (an OpenAI-compatible embedder learns its width from its first answer)
        return await self.ledger.read(
            lambda db: search(
                db, bank=self.bank, embedder=self.embedder, dim=dim, query=query, k=k, iterative=self.iterative
            )
        )
