"""The keyword retriever: BM25 over the full-text (FTS5) index of the memories' terms, matching only
the query terms selective enough to be worth scoring."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from memwarden.store.text import match_query

# A query term in more than COMMON_SHARE of the memories (and more than MIN_COMMON_DOCS) carries
# little weight; and BM25 costs ~7 µs per matching memory here, so the terms matched together may
# reach at most MAX_MATCH_DOCS memories (rarest first). What is left out is the semantic
# retriever's to find.
COMMON_SHARE = 0.05
MIN_COMMON_DOCS = 20
MAX_MATCH_DOCS = 1000


class TermStats:
    """Document frequencies of query terms, cached. Reading a term's frequency from the FTS
    vocabulary walks its whole posting list (~4 ms for a term in 50,000 memories); the frequency
    only steers which terms are worth matching, so a cached value is re-read once the store has
    grown by a tenth since it was read."""

    def __init__(self, size: int = 20_000) -> None:
        self._df: dict[str, tuple[int, int]] = {}  # term -> (frequency, rows when read)
        self._size = size
        self._lock = threading.Lock()

    def frequencies(self, db: sqlite3.Connection, words: Sequence[str], total: int) -> dict[str, int]:
        with self._lock:
            cached = {w: self._df.get(w) for w in words}
        fresh = {w: v[0] for w, v in cached.items() if v is not None and total <= v[1] * 1.1 + 100}
        stale = [w for w in words if w not in fresh]
        if stale:
            marks = ",".join("?" * len(stale))
            sql = f"SELECT term, doc FROM store_units_vocab WHERE term IN ({marks})"  # noqa: S608
            read = dict(db.execute(sql, stale).fetchall())
            with self._lock:
                if len(self._df) + len(stale) > self._size:
                    self._df.clear()
                for w in stale:
                    fresh[w] = read.get(w, 0)
                    self._df[w] = (fresh[w], total)
        return fresh


def selective_terms(db: sqlite3.Connection, words: list[str], stats: TermStats | None = None) -> list[str]:
    """The query terms worth matching: those in at most COMMON_SHARE of the memories (document
    frequency from the FTS vocabulary), rarest first while together they match at most
    MAX_MATCH_DOCS memories. Scoring thousands of rows for "the" or "的" costs more than it tells;
    when every term is common, only the least common one is kept (if it is not too common to rank
    at all)."""
    # Rows ever inserted (AUTOINCREMENT's counter): a cheap upper bound on the live count.
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'store_units'").fetchone()
    total = (row[0] if row else 0) or 1
    df = (stats or TermStats()).frequencies(db, words, total)
    present = sorted((w for w in dict.fromkeys(words) if df.get(w, 0) > 0), key=lambda w: df[w])
    common = max(MIN_COMMON_DOCS, COMMON_SHARE * total)
    if not present:
        return []
    if df[present[0]] > common:  # all common: the least common one may still rank
        return present[:1] if df[present[0]] <= MAX_MATCH_DOCS else []
    chosen: list[str] = []
    reach = 0
    for w in present:
        if df[w] > common or reach + df[w] > MAX_MATCH_DOCS:
            break
        chosen.append(w)
        reach += df[w]
    # The caller's order (FTS5 does not care; traces read better).
    return [w for w in words if w in chosen]


@dataclass
class KeywordHits:
    """One run of the keyword retriever: its ranking (memory id, BM25 score negated: higher is
    better), the full-text query it ran (None when no term was worth matching), and the row key
    (``seq``) and token cost of each memory it ranked, so recall reads no row for them."""

    ranked: list[tuple[str, float]] = field(default_factory=list)
    fts: str | None = None
    seq: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


def keyword_arm(db: sqlite3.Connection, *, bank: str, words: list[str], limit: int, terms: TermStats) -> KeywordHits:
    """The ``limit`` best valid memories of ``bank`` for the query terms ``words``."""
    if not words:
        return KeywordHits()
    fts = match_query(selective_terms(db, words, terms))
    if fts is None:
        return KeywordHits()
    # Rank in the index first (FTS5 keeps only the best ``limit``), then filter by bank and
    # state; the over-fetch keeps other banks' matches from crowding a bank out.
    rows = db.execute(
        "SELECT u.id, f.rank, f.rowid, u.tokens FROM (SELECT rowid, rank FROM store_units_fts"
        " WHERE store_units_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN store_units u ON u.seq = f.rowid"
        " WHERE u.bank_id = ? AND u.state = 'valid' ORDER BY f.rank",
        (fts, limit * 4, bank),
    ).fetchall()
    return KeywordHits(
        ranked=[(r[0], -float(r[1])) for r in rows[:limit]],
        fts=fts,
        seq={r[0]: r[2] for r in rows[:limit]},
        tokens={r[0]: r[3] for r in rows[:limit]},
    )
