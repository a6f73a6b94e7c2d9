"""One bank's vectors in memory: exact search over a float32 matrix, and an HNSW graph beside it
once the bank is large.

The matrix is the truth. It is built from the stored BLOBs on first use, appended to as memories
arrive, and a removed memory's row is masked, never moved — so a row number names one vector for
the life of the index. Exact search (one matrix-vector product) costs ~1 ms per 10,000 memories
here and is always right; past ``ann_threshold`` live rows an HNSW graph (voyager) is built in a
background thread from a snapshot of the matrix and from then on answers for the rows it covers
(~2 ms at 100,000, recall@10 ≈ 0.998 measured on this machine). Rows added after the snapshot
(the *tail*) are searched exactly and merged in, so a memory is findable by meaning the moment it
is stored — a node inserted into a built graph can end up unreachable when its neighbours are near
duplicates of one another. Once the tail passes a twentieth of the graph it is inserted into the
graph in the background, in place (each row inserted once: rebuilding from scratch each time cost
a bulk retain of 100,000 memories a core for most of its run); a graph is built with room for as
many rows again, and past that room a new one is built and swapped in. Until the first graph is
ready, or when a search wants more neighbours than a graph answers well, exact search serves.
Nothing of the graph is persisted: it is rebuilt on start.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import structlog
import voyager

from memwarden.store.cores import available_cores
from memwarden.store.embedder import Vector

log = structlog.get_logger("memwarden.store")
# Searches wanting more neighbours than this go to the matrix: a graph walk that wide costs more
# than the product, and its recall drops.
ANN_MAX_K = 2000
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
# The graph takes in its tail once the tail passes this fraction of it (1/20).
TAIL_FRACTION = 20
_BUILD_THREADS = max(1, available_cores() - 1)  # leave a core to the server


class BankIndex:
    """One bank's vectors: a growable float32 matrix (removed rows masked, not moved) and, past
    ``ann_threshold`` live rows, an HNSW graph over the same row numbers."""

    def __init__(self, dim: int, embedder: str, *, ann_threshold: int = 0) -> None:
        self.dim = dim
        self.embedder = embedder
        self.ann_threshold = ann_threshold
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        # The store's row key (``seq``) and token cost of each live id, when the caller gives them:
        # a recall then picks what fits its budget without reading rows, and reads the rows it
        # returns by primary key, one B-tree descent instead of two.
        self.seq: dict[str, int] = {}
        self.tokens: dict[str, int] = {}
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self.size = 0
        self.lock = threading.Lock()
        self._ann: Any = None  # voyager.Index over rows [0, _covered), dead rows marked deleted
        self._covered = 0
        self._building = False

    @property
    def live(self) -> int:
        return len(self.row)

    @property
    def covered(self) -> int:
        """Rows the current graph covers (0 without one)."""
        return self._covered

    @property
    def kind(self) -> str:
        """``hnsw`` once the graph answers searches, else ``exact``."""
        return "hnsw" if self._ann is not None else "exact"

    def add(
        self,
        ids: Sequence[str],
        vectors: Vector,
        seqs: Sequence[int] | None = None,
        tokens: Sequence[int] | None = None,
    ) -> None:
        with self.lock:
            if seqs is not None:
                self.seq.update(zip(ids, seqs, strict=True))
            if tokens is not None:
                self.tokens.update(zip(ids, tokens, strict=True))
            start, need = self.size, self.size + len(ids)
            if need > len(self._matrix):
                cap = max(need, 2 * len(self._matrix), 1024)
                grown = np.zeros((cap, self.dim), dtype=np.float32)
                grown[:start] = self._matrix[:start]
                alive = np.zeros(cap, dtype=bool)
                alive[:start] = self._alive[:start]
                self._matrix, self._alive = grown, alive
            dead = []
            for i, memory_id in enumerate(ids):
                old = self.row.get(memory_id)
                if old is not None:
                    self._alive[old] = False
                    dead.append(old)
                self.row[memory_id] = start + i
            self._matrix[start:need] = vectors
            self._alive[start:need] = True
            self.ids.extend(ids)
            self.size = need
            self._delete(dead)
        self._maybe_build()

    def remove(self, ids: Iterable[str]) -> None:
        with self.lock:
            dead = []
            for memory_id in ids:
                self.seq.pop(memory_id, None)
                self.tokens.pop(memory_id, None)
                row = self.row.pop(memory_id, None)
                if row is not None:
                    self._alive[row] = False
                    dead.append(row)
            self._delete(dead)

    def _delete(self, rows: Iterable[int]) -> None:
        if self._ann is not None:
            for row in rows:
                if row < self._covered:
                    self._ann.mark_deleted(int(row))

    def search(self, query: Vector, k: int) -> list[tuple[str, float]]:
        with self.lock:
            if not self.live:
                return []
            k = min(k, self.live)
            if self._ann is not None and k <= ANN_MAX_K:
                covered = self._covered
                live_covered = int(np.count_nonzero(self._alive[:covered]))
                try:
                    if not live_covered:
                        raise voyager.RecallError("every row the graph covers was removed")
                    rows, distances = self._ann.query(query, k=min(k, live_covered), query_ef=max(k, 64))
                except voyager.RecallError:  # fewer than k reachable (many deletions): the matrix answers
                    pass
                else:
                    # Inner-product space: distance = 1 - similarity. The tail is searched exactly;
                    # the graph may hold some of it already (an extension under way), dead rows too.
                    alive = self._alive
                    found = {r: s for r, s in zip(rows.tolist(), (1.0 - distances).tolist(), strict=True) if alive[r]}
                    found.update(self._exact(query, k, covered))
                    best = sorted(found, key=lambda r: -found[r])[:k]
                    return [(self.ids[r], found[r]) for r in best]
            return [(self.ids[r], s) for r, s in self._exact(query, k, 0).items()]

    def _exact(self, query: Vector, k: int, start: int) -> dict[int, float]:
        """The best ``k`` live rows from ``start`` on, best first: {row: similarity}."""
        if start >= self.size:
            return {}
        scores = self._matrix[start : self.size] @ query
        scores = np.where(self._alive[start : self.size], scores, -np.inf)
        n = len(scores)
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-scores[top])]
        best = scores[top]
        live = np.isfinite(best)  # masked rows score -inf
        return dict(zip((top[live] + start).tolist(), best[live].tolist(), strict=True))

    # -- the graph ------------------------------------------------------------------------------

    def _maybe_build(self) -> None:
        with self.lock:
            if not self.ann_threshold or self._building or self.live < self.ann_threshold:
                return
            graph, start, upto = self._ann, self._covered, self.size
            if graph is not None and upto - start <= start // TAIL_FRACTION:
                return  # the tail is still small
            self._building = True
            snapshot = self._matrix  # rows below ``upto`` never change
        if graph is None or upto > graph.max_elements:
            graph, start = None, 0  # a new graph: never voyager's resize, see _insert
        threading.Thread(
            target=self._insert, args=(graph, snapshot, start, upto), name="memwarden-hnsw", daemon=True
        ).start()

    def _insert(self, graph: Any, snapshot: Vector, start: int, upto: int) -> None:
        """Rows [start, upto) into ``graph``, in place while it answers searches (voyager allows
        inserts beside queries; a resize would move memory a query may be reading, so a graph
        never grows past its room); without a graph, a new one over [0, upto) with room for as
        many rows again, swapped in once built. Then the rows that arrived meanwhile are taken in
        (no add may come to ask). A failure leaves the matrix serving and the tail exact; the next
        add tries again."""
        try:
            if graph is None:
                graph = voyager.Index(
                    voyager.Space.InnerProduct,
                    num_dimensions=self.dim,
                    M=HNSW_M,
                    ef_construction=HNSW_EF_CONSTRUCTION,
                    max_elements=2 * max(upto, 1024),
                )
            graph.add_items(snapshot[start:upto], ids=np.arange(start, upto), num_threads=_BUILD_THREADS)
            with self.lock:  # rows removed meanwhile; rows added meanwhile are the tail
                for row in np.flatnonzero(~self._alive[start:upto]).tolist():
                    graph.mark_deleted(start + row)
                self._ann, self._covered, self._building = graph, upto, False
            log.info("store.hnsw_ready", embedder=self.embedder, rows=upto, inserted=upto - start, live=self.live)
        except Exception:
            log.exception("store.hnsw_failed", embedder=self.embedder, rows=upto)
            with self.lock:
                self._building = False
            return
        self._maybe_build()

    def wait_ready(self, timeout: float) -> bool:
        """For tests and benchmarks: block until the graph is built (True) or ``timeout`` passes."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self._ann is not None:
                    return True
                if not self._building and (not self.ann_threshold or self.live < self.ann_threshold):
                    return False
            time.sleep(0.05)
        return self._ann is not None
