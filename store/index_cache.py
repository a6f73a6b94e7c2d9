"""Each bank's vector index (:class:`store.vectors.BankIndex`), kept in memory: built from the stored
vectors on first use, then kept in step with the rows as memories are written, edited and deleted.

Only vectors of the current embedder are loaded: a bank's vectors of another model are never mixed
into a search (they wait for :func:`store.reembed.reembed`).

On PostgreSQL nothing is kept in memory: other instances write the same banks, so a bank's index
is the database's (:class:`store.pg_vectors.PgBankIndex`, pgvector's HNSW), and the calls that keep
an in-memory index in step do nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

from memwarden.db.database import Database
from memwarden.store.embedder import Embedder, Vector
from memwarden.store.pg_vectors import PgBankIndex
from memwarden.store.vectors import BankIndex


class IndexCache:
    def __init__(self, ledger: Database, embedder: Embedder, *, ann_threshold: int = 20_000) -> None:
        self.ledger = ledger
        self.embedder = embedder
        self.ann_threshold = ann_threshold
        self._indexes: dict[str, BankIndex] = {}
        self._lock = asyncio.Lock()
        self.in_database = ledger.url is not None  # PostgreSQL: pgvector's index, nothing in memory
        self.indexed: set[tuple[str, int]] = set()  # PostgreSQL: the (embedder, width) HNSW indexes made
        self.iterative = False  # PostgreSQL: pgvector's iterative scans (0.8 and later)

    def loaded(self, bank: str) -> BankIndex | None:
        """The bank's index if it is loaded already (nothing is read)."""
        return self._indexes.get(bank)

    async def get(self, bank: str) -> BankIndex | PgBankIndex:
        """The bank's index, loaded from its stored vectors on first use."""
        if self.in_database:
            return PgBankIndex(self.ledger, bank, self.embedder.name, iterative=self.iterative)
        index = self._indexes.get(bank)
        if index is not None:
            return index
        async with self._lock:
            index = self._indexes.get(bank)
            if index is not None:
                return index
            name, dim = self.embedder.name, self.embedder.dim

            def load(db: sqlite3.Connection) -> tuple[list[str], list[int], list[int], bytes]:
                rows = db.execute(
                    "SELECT id, seq, tokens, embedding FROM store_units WHERE bank_id = ? AND state = 'valid'"
                    " AND embedder = ? ORDER BY seq",
                    (bank, name),
                ).fetchall()
                return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], b"".join(r[3] for r in rows)

            ids, seqs, costs, blob = await self.ledger.read(load)
            index = BankIndex(dim, name, ann_threshold=self.ann_threshold)
            if ids:
                index.add(ids, np.frombuffer(blob, dtype=np.float32).reshape(len(ids), dim), seqs, costs)
            self._indexes[bank] = index
            return index

    async def replace(
        self,
        bank: str,
        replaced: Iterable[str],
        ids: Sequence[str],
        vectors: Vector,
        seqs: Sequence[int],
        costs: Sequence[int],
    ) -> None:
        """After a committed write: drop ``replaced`` and add the new rows, if the index is loaded.
        Under the index lock: a concurrent first load either read these rows or finishes before
        they are added here (adding an id twice keeps the newer row)."""
        async with self._lock:
            index = self._indexes.get(bank)
            if index is not None:
                index.remove(replaced)
                index.add(ids, vectors, seqs, costs)

    def remove(self, bank: str, ids: Iterable[str]) -> None:
        """Drop deleted rows from the bank's index, if it is loaded."""
        index = self._indexes.get(bank)
        if index is not None:
            index.remove(ids)

    def forget(self, bank: str) -> None:
        """Drop the bank's index at once (the bank is gone)."""
        self._indexes.pop(bank, None)

    async def invalidate(self, bank: str) -> None:
        """Drop the bank's index once a load in progress has finished; it is rebuilt from the stored
        vectors on next use."""
        async with self._lock:
            self._indexes.pop(bank, None)
