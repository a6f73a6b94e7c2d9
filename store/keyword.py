"""The keyword retriever: BM25 with each bank's own statistics, over the full-text (FTS5) index —
on PostgreSQL over its posting list (``store_terms``: the same terms, the same scores).

Every term in the index carries its bank's prefix (``store/text.py``), so a term's postings and
document frequency are the bank's alone. BM25 is computed here, from the index's occurrence list
of each query term (``store_units_vocab_instance``) and the bank's size and mean memory length
(:class:`BankStats`): k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5)) — the same
formula as Lucene's and FTS5's but over one bank, not over every bank of the store.

The query: its terms (stemmed; Chinese as bigrams) without stopwords (``store/stopwords.py``; a
query of stopwords alone keeps them). The cost bound: reading a term's memories costs ~0.5 µs
each, so the terms are taken rarest first while their occurrences together stay within
MAX_POSTINGS; a term past it is left out — by then the bank's most common ones, the least
informative. Every other term of the query is scored, however common.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from memwarden.db.common import on_postgres
from memwarden.store.schema_postgres import TERM_CHARS
from memwarden.store.stopwords import is_stopword
from memwarden.store.text import bank_prefix

K1 = 1.2
B = 0.75
MAX_POSTINGS = 3000  # occurrences a query reads, at most (~1.5 ms at the bound through MATCH; most read far fewer)


def query_plan(words: Sequence[str]) -> list[str]:
    """The query terms worth scoring: without stopwords, unless nothing else is left."""
    content = [w for w in dict.fromkeys(words) if not is_stopword(w)]
    return content or list(dict.fromkeys(words))


class BankStats:
    """Each bank's number of valid memories and their mean length in terms, cached: re-read once
    the store has grown by a tenth or a minute has passed (a bank's own growth does not move the
    store's counter much when the store holds many banks)."""

    TTL = 60.0

    def __init__(self) -> None:
        self._banks: dict[str, tuple[int, float, int, float]] = {}  # bank -> (memories, mean length, rows, read at)
        self._lock = threading.Lock()

    def get(self, db: sqlite3.Connection, bank: str, total: int) -> tuple[int, float]:
        with self._lock:
            cached = self._banks.get(bank)
        if cached is not None and total <= cached[2] * 1.1 + 100 and time.monotonic() - cached[3] < self.TTL:
            return cached[0], cached[1]
        row = db.execute(
            "SELECT count(*), avg(term_count) FROM store_units WHERE bank_id = ? AND state = 'valid'", (bank,)
        ).fetchone()
        n, mean = int(row[0] or 0), float(row[1] or 0.0)
        with self._lock:
            self._banks[bank] = (n, mean, total, time.monotonic())
        return n, mean


class TermStats:
    """Document and occurrence counts of (bank-prefixed) terms, cached. Reading them from the FTS
    vocabulary walks a term's posting list (~4 ms for a term in 50,000 memories); they only steer
    which terms are read (and the idf, which moves little), so a cached value is re-read once the
    store has grown by a tenth since it was read."""

    def __init__(self, size: int = 20_000) -> None:
        self._counts: dict[str, tuple[int, int, int]] = {}  # term -> (documents, occurrences, rows when read)
        self._size = size
        self._lock = threading.Lock()
        self.banks = BankStats()  # and each bank's size and mean length

    def counts(self, db: sqlite3.Connection, words: Sequence[str], total: int) -> dict[str, tuple[int, int]]:
        with self._lock:
            cached = {w: self._counts.get(w) for w in words}
        fresh = {w: (v[0], v[1]) for w, v in cached.items() if v is not None and total <= v[2] * 1.1 + 100}
        stale = [w for w in words if w not in fresh]
        if stale:
            marks = ",".join("?" * len(stale))
            sql = (
                f"SELECT term, count(*), sum(tf) FROM store_terms WHERE term IN ({marks}) GROUP BY term"  # noqa: S608
                if on_postgres(db)
                else f"SELECT term, doc, cnt FROM store_units_vocab WHERE term IN ({marks})"  # noqa: S608
            )
            read = {r[0]: (r[1], r[2]) for r in db.execute(sql, stale).fetchall()}
            with self._lock:
                if len(self._counts) + len(stale) > self._size:
                    self._counts.clear()
                for w in stale:
                    fresh[w] = read.get(w, (0, 0))
                    self._counts[w] = (*fresh[w], total)
        return fresh


def rows_ever(db: sqlite3.Connection) -> int:
    """Rows ever inserted (AUTOINCREMENT's counter; PostgreSQL: the last row's key): how far the
    store has grown."""
    if on_postgres(db):
        row = db.execute("SELECT max(seq) FROM store_units").fetchone()
    else:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'store_units'").fetchone()
    return (row[0] if row else 0) or 1


@dataclass
class KeywordHits:
    """One run of the keyword retriever: its ranking (memory id, BM25 score: higher is better),
    what it scored (``fts``: each term read with its document frequency in the bank, and the terms
    left out and why; None when no term was worth reading), and the row key (``seq``) and token cost
    of each memory it ranked, so recall reads no row for them."""

    ranked: list[tuple[str, float]] = field(default_factory=list)
    fts: str | None = None
    seq: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    mass: float = 0.0  # the sum of the scored terms' idf: about what a memory matching each once scores


def keyword_arm(
    db: sqlite3.Connection,
    *,
    bank: str,
    words: list[str],
    limit: int,
    terms: TermStats,
) -> KeywordHits:
    """The ``limit`` best valid memories of ``bank`` for the query terms ``words`` by BM25."""
    prefix = bank_prefix(bank)
    if on_postgres(db):  # the posting list's terms are cut to TERM_CHARS: a query's are too
        words = list(dict.fromkeys(w[: TERM_CHARS - len(prefix)] for w in words))
    wanted = query_plan(words)
    if not wanted:
        return KeywordHits()
    total = rows_ever(db)
    counts = terms.counts(db, [prefix + w for w in wanted], total)
    present = sorted((w for w in wanted if counts[prefix + w][0] > 0), key=lambda w: counts[prefix + w])
    chosen, skipped, reach = [], [], 0
    for w in present:
        occurrences = counts[prefix + w][1]
        if reach + occurrences > MAX_POSTINGS:
            skipped.append(w)
            continue
        chosen.append(w)
        reach += occurrences
    stopped = [w for w in dict.fromkeys(words) if w not in wanted]
    if not chosen:
        return KeywordHits(fts=_describe([], counts, prefix, skipped, stopped) if skipped else None)
    n, mean = terms.banks.get(db, bank, total)
    n = max(n, 1)
    # Each term's memories from the full-text index's doclist (FTS5 MATCH: ~0.1 µs a memory, where
    # the vocabulary's occurrence list cost ~3 µs an occurrence and ~1.5 ms a term). A term counts
    # once a memory (binary term frequency): memories are short, a term rarely repeats in one, and
    # its occurrences would cost the occurrence list again (bench/heldout.py measured no loss).
    # (PostgreSQL: the term's rows of the posting list, store/schema_postgres.py.)
    tf: dict[int, dict[str, int]] = {}
    pg = on_postgres(db)
    for w in chosen:
        if pg:
            postings = db.execute("SELECT seq FROM store_terms WHERE term = ?", (prefix + w,))
        else:
            phrase = '"' + (prefix + w).replace('"', '""') + '"'
            postings = db.execute("SELECT rowid FROM store_units_fts WHERE store_units_fts MATCH ?", (phrase,))
        for (doc,) in postings:
            tf.setdefault(doc, {})[w] = 1
    # (The bank's size is cached; a bank that grew since it was read may hold a term in more
    # memories than the cached size: the size is then at least that.)
    idf = {}
    for w in chosen:
        df = counts[prefix + w][0]
        idf[w] = math.log(1.0 + (max(n, df) - df + 0.5) / (df + 0.5))
    # The memories' lengths and states, then the scores of the valid ones.
    docs = list(tf)
    info: dict[int, tuple[str, int, int, str]] = {}
    for start in range(0, len(docs), 900):
        chunk = docs[start : start + 900]
        sql = f"SELECT seq, id, tokens, term_count, state FROM store_units WHERE seq IN ({','.join('?' * len(chunk))})"  # noqa: S608
        info.update((r[0], (r[1], r[2], r[3], r[4])) for r in db.execute(sql, chunk))
    norm = K1 * (1 - B)
    per_length = K1 * B / (mean or 1.0)
    scored: list[tuple[float, int]] = []
    for doc, found in tf.items():
        row = info.get(doc)
        if row is None or row[3] != "valid":
            continue
        denominator_base = norm + per_length * row[2]
        score = sum(idf[w] * f * (K1 + 1) / (f + denominator_base) for w, f in found.items())
        scored.append((score, doc))
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[:limit]
    return KeywordHits(
        ranked=[(info[d][0], round(s, 6)) for s, d in top],
        fts=_describe(chosen, counts, prefix, skipped, stopped),
        seq={info[d][0]: d for _, d in top},
        tokens={info[d][0]: info[d][1] for _, d in top},
        mass=sum(idf.values()),
    )


def _describe(
    chosen: list[str], counts: dict[str, tuple[int, int]], prefix: str, skipped: list[str], stopped: list[str]
) -> str:
    """What the keyword arm scored, for the trace and explain: each term with its document
    frequency in the bank; the terms left out by the cost bound and as stopwords."""
    out = " ".join(f"{w}(df {counts[prefix + w][0]})" for w in chosen) or "—"
    if skipped:
        out += f"; past the cost bound: {' '.join(skipped)}"
    if stopped:
        out += f"; stopwords: {' '.join(stopped)}"
    return out
