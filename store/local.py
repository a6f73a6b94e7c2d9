"""The self-hosted store: memwarden as the memory server (SPEC §6).

All rows live in the ledger's database (one store, one writer thread: :class:`memwarden.db.database.Database`);
reads run on the ledger's reader threads, embedding and vector search on worker threads, never on
the event loop. Vectors are kept in memory per bank for exact search (a float32 matrix, built from
the BLOBs on first use) and appended to as memories arrive.

A memory is one row of ``store_units`` (there is no LLM extraction here: each retained item is one
``world`` fact). Lifecycle: ``state`` is ``valid`` or ``invalidated`` (archived: out of recall and
lists, kept); the destructive API routes (document, memories, bank ``DELETE``) delete rows, and
memwarden's guard in front of them snapshots first and asks for confirmation.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from importlib import resources
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
import structlog

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import chunked, now
from memwarden.db.database import Database
from memwarden.store import rules, tagfilter
from memwarden.store.embedder import Embedder, Vector
from memwarden.store.schema import STORE_MIGRATIONS
from memwarden.store.text import index_text, match_query, query_terms, token_estimate
from memwarden.store.vectors import BankIndex

log = structlog.get_logger("memwarden.store")
DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}
BUDGET_POOL = {"low": 100, "mid": 300, "high": 1000}
RRF_K = 60
# One net vote of feedback moves a memory by a quarter of a first place in one retriever; at most
# three votes count either way.
FEEDBACK_STEP = 0.25 / (RRF_K + 1)
FEEDBACK_CAP = 3
# What recall reads of a candidate (not its vector: the index has it), as a plain tuple in this
# order: RecallRow's fields, and the unpacking where recall shapes its answer.
RECALL_COLUMNS = (
    "id, text, context, fact_type, tags, metadata, document_id, mentioned_at, occurred_start, occurred_end, state"
)
RecallRow = tuple[str, str, str, str, str, str, str | None, str | None, str | None, str | None, str]


@lru_cache(maxsize=1)
def hindsight_defaults() -> Mapping[str, Any]:
    """Hindsight 1.1.0's resolved per-bank config with no overrides (captured from the server);
    read once, read-only."""
    text = resources.files("memwarden.store").joinpath("hindsight_defaults.json").read_text(encoding="utf-8")
    return MappingProxyType(json.loads(text))


class StoreError(Exception):
    """A request the store cannot serve; ``status`` and ``detail`` are Hindsight's answer."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


_T = TypeVar("_T")


def obey(rule: Callable[..., _T], *args: Any) -> _T:
    """Apply one of Hindsight's input rules (``store.rules``); its refusal is the client's ``400``."""
    try:
        return rule(*args)
    except ValueError as exc:
        raise StoreError(400, str(exc)) from None


def bank_not_found(bank: str) -> StoreError:
    return StoreError(404, f"Bank '{bank}' not found")


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


# -- rows → Hindsight shapes ----------------------------------------------------------------------


def _loads(value: str | None, default: Any) -> Any:
    if value is None:
        return default
    if value in ("[]", "{}"):  # most rows' tags and metadata: skip the decoder (recall returns ~200)
        return [] if value == "[]" else {}
    return json.loads(value)


def _unit_common(r: sqlite3.Row) -> dict[str, Any]:
    """The fields Hindsight's list item and detail of a memory share."""
    return {
        "id": r["id"],
        "text": r["text"],
        "context": r["context"],
        "date": r["mentioned_at"],
        "document_id": r["document_id"],
        "mentioned_at": r["mentioned_at"],
        "occurred_start": r["occurred_start"],
        "occurred_end": r["occurred_end"],
        "chunk_id": None,
        "tags": _loads(r["tags"], []),
        "metadata": _loads(r["metadata"], {}),
        "consolidated_at": None,
        "consolidation_failed_at": None,
        "state": r["state"],
        "invalidation_reason": r["invalidation_reason"],
        "invalidated_at": r["invalidated_at"],
        "edited_at": r["edited_at"],
    }


def unit_list_item(r: sqlite3.Row) -> dict[str, Any]:
    """``MemoryUnitListItem`` (``GET …/memories/list``)."""
    return {
        **_unit_common(r),
        "fact_type": r["fact_type"],
        "entities": "",
        "proof_count": 1,
        "updated_at": r["updated_at"],
        "source_memory_ids": [],
    }


def unit_detail(r: sqlite3.Row) -> dict[str, Any]:
    """A world fact as ``GET``/``PATCH …/memories/{id}`` answers it."""
    return {**_unit_common(r), "type": r["fact_type"], "entities": [], "observation_scopes": None}


def document_item(r: sqlite3.Row, unit_count: int) -> dict[str, Any]:
    return {
        "id": r["id"],
        "bank_id": r["bank_id"],
        "content_hash": r["content_hash"],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "text_length": len(r["original_text"] or ""),
        "memory_unit_count": unit_count,
        "retain_params": _loads(r["retain_params"], None),
        "document_metadata": _loads(r["metadata"], None),
        "tags": _loads(r["tags"], []),
        "matched_fields": [],
    }


@dataclass
class RetainItem:
    content: str
    document_id: str | None = None
    tags: list[str] = field(default_factory=list)
    context: str | None = None
    metadata: dict[str, Any] | None = None
    timestamp: str | None = None


# -- the store ------------------------------------------------------------------------------------


class LocalStore:
    def __init__(self, ledger: Database, embedder: Embedder, *, ann_threshold: int = 20_000) -> None:
        ledger.migrate_sync(STORE_MIGRATIONS)
        self.ledger = ledger
        self.embedder = embedder
        self.ann_threshold = ann_threshold
        self._indexes: dict[str, BankIndex] = {}
        self._index_lock = asyncio.Lock()
        self._terms = TermStats()
        self._feedback: dict[str, dict[str, int]] = {}  # bank -> unit id -> net votes (non-zero only)
        self._tasks: set[asyncio.Task[None]] = set()

    # -- banks ----------------------------------------------------------------------------

    @staticmethod
    def _ensure_bank(db: sqlite3.Connection, bank: str, ts: str) -> None:
        """Create ``bank`` on first use (any write creates it, as in Hindsight), if its id may be a
        new bank's; inside the caller's transaction, so a refused id writes nothing."""
        if db.execute("SELECT 1 FROM store_banks WHERE bank_id = ?", (bank,)).fetchone() is not None:
            return
        obey(rules.check_new_bank_id, bank)
        db.execute("INSERT INTO store_banks (bank_id, created_at, updated_at) VALUES (?, ?, ?)", (bank, ts, ts))

    async def bank_row(self, bank: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = await self.ledger.read(
            lambda db: db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        )
        return row

    async def require_bank(self, bank: str) -> sqlite3.Row:
        row = await self.bank_row(bank)
        if row is None:
            raise bank_not_found(bank)
        return row

    @staticmethod
    def profile(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "bank_id": row["bank_id"],
            "name": row["name"] or row["bank_id"],
            "disposition": _loads(row["disposition"], DEFAULT_DISPOSITION),
            "mission": row["mission"],
            "background": row["background"],
        }

    async def put_bank(self, bank: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Create or update a bank (``PUT``/``PATCH`` a bank): profile fields, and the flat config subset."""
        known = hindsight_defaults()
        config_keys = {k: v for k, v in fields.items() if k in known and v is not None}
        mission = fields.get("mission") or fields.get("reflect_mission")

        def write(db: sqlite3.Connection) -> sqlite3.Row:
            ts = now()
            self._ensure_bank(db, bank, ts)
            row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
            disposition = _loads(row["disposition"], DEFAULT_DISPOSITION)
            if isinstance(fields.get("disposition"), dict):
                disposition.update({k: v for k, v in fields["disposition"].items() if k in DEFAULT_DISPOSITION})
            for trait in DEFAULT_DISPOSITION:
                if fields.get(f"disposition_{trait}") is not None:
                    disposition[trait] = fields[f"disposition_{trait}"]
            overrides = _loads(row["overrides"], {})
            obey(rules.check_config_updates, config_keys, {**known, **overrides})  # against the bank's config
            overrides.update(config_keys)
            db.execute(
                "UPDATE store_banks SET name = COALESCE(?, name), mission = COALESCE(?, mission),"
                " background = COALESCE(?, background), disposition = ?, overrides = ?, updated_at = ? WHERE bank_id = ?",
                (
                    fields.get("name"),
                    mission,
                    fields.get("background"),
                    json.dumps(disposition),
                    json.dumps(overrides, ensure_ascii=False),
                    ts,
                    bank,
                ),
            )
            result: sqlite3.Row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
            return result

        return self.profile(await self.ledger.write(write))

    async def list_banks(self, q: str | None, limit: int, offset: int) -> dict[str, Any]:
        def read(db: sqlite3.Connection) -> tuple[list[sqlite3.Row], int, dict[str, int]]:
            where, params = "1 = 1", []
            if q:
                where, params = "bank_id LIKE ? OR name LIKE ?", [f"%{q}%", f"%{q}%"]
            total = db.execute(f"SELECT COUNT(*) FROM store_banks WHERE {where}", params).fetchone()[0]  # noqa: S608
            rows = db.execute(
                f"SELECT * FROM store_banks WHERE {where} ORDER BY created_at DESC LIMIT ? OFFSET ?",  # noqa: S608
                (*params, limit, offset),
            ).fetchall()
            counts = {
                r[0]: r[1]
                for r in db.execute(
                    "SELECT bank_id, COUNT(*) FROM store_units WHERE state = 'valid' GROUP BY bank_id"
                ).fetchall()
            }
            return rows, total, counts

        rows, total, counts = await self.ledger.read(read)
        banks = [
            {
                "bank_id": r["bank_id"],
                "name": r["name"] or r["bank_id"],
                "disposition": _loads(r["disposition"], DEFAULT_DISPOSITION),
                "mission": r["mission"],
                "created_at": r["created_at"],
                "updated_at": r["updated_at"],
                "fact_count": counts.get(r["bank_id"], 0),
                "last_document_at": r["last_document_at"],
                "last_write_at": r["last_write_at"],
                "display_alias": None,
                "matched_aliases": [],
            }
            for r in rows
        ]
        return {"banks": banks, "total": total, "limit": limit, "offset": offset}

    async def delete_bank(self, bank: str) -> dict[str, Any]:
        await self.require_bank(bank)

        def write(db: sqlite3.Connection) -> int:
            n = db.execute("DELETE FROM store_units WHERE bank_id = ?", (bank,)).rowcount
            db.execute("DELETE FROM store_documents WHERE bank_id = ?", (bank,))
            db.execute("DELETE FROM store_operations WHERE bank_id = ?", (bank,))
            db.execute("DELETE FROM store_banks WHERE bank_id = ?", (bank,))
            return int(n)

        await self.ledger.write(write)
        self._feedback.pop(bank, None)
        self._indexes.pop(bank, None)
        return {
            "success": True,
            "message": f"Bank '{bank}' and all associated data deleted successfully",
            "deleted_count": 0,
        }

    # -- config ---------------------------------------------------------------------------

    async def get_config(self, bank: str) -> dict[str, Any]:
        row = await self.require_bank(bank)
        overrides = _loads(row["overrides"], {})
        return {"bank_id": bank, "config": {**hindsight_defaults(), **overrides}, "overrides": overrides}

    async def patch_config(self, bank: str, updates: Mapping[str, Any]) -> dict[str, Any]:
        known = hindsight_defaults()
        unknown = sorted(k for k in updates if k not in known)
        if unknown:
            raise StoreError(400, f"Unknown configuration fields: {unknown}")
        labels = updates.get("entity_labels")
        if labels is not None and not (isinstance(labels, list) and all(isinstance(g, dict) for g in labels)):
            raise StoreError(400, "Invalid entity_labels format: expected a list of label groups")

        def write(db: sqlite3.Connection) -> None:
            ts = now()
            self._ensure_bank(db, bank, ts)
            row = db.execute("SELECT overrides FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
            overrides = _loads(row["overrides"], {})
            obey(rules.check_config_updates, updates, {**known, **overrides})  # against the bank's config
            for key, value in updates.items():
                if value is None:
                    overrides.pop(key, None)
                else:
                    overrides[key] = value
            db.execute(
                "UPDATE store_banks SET overrides = ?, updated_at = ? WHERE bank_id = ?",
                (json.dumps(overrides, ensure_ascii=False), ts, bank),
            )

        await self.ledger.write(write)
        return await self.get_config(bank)

    async def reset_config(self, bank: str) -> dict[str, Any]:
        await self.require_bank(bank)
        await self.ledger.write(
            lambda db: db.execute(
                "UPDATE store_banks SET overrides = '{}', updated_at = ? WHERE bank_id = ?", (now(), bank)
            )
        )
        return await self.get_config(bank)

    # -- retain ---------------------------------------------------------------------------

    async def retain(self, bank: str, items: Sequence[RetainItem], document_tags: Sequence[str] = ()) -> int:
        """Store ``items`` (one memory each) atomically: every row, its FTS entry and its vector in
        one transaction. A document id already present is replaced, as Hindsight does."""
        if not items:
            return 0
        vectors = await asyncio.to_thread(self.embedder.passages, [i.content for i in items])
        ids = [uuid.uuid4().hex for _ in items]
        costs = [token_estimate(i.content) for i in items]
        name = self.embedder.name

        def write(db: sqlite3.Connection) -> tuple[list[str], list[int]]:
            ts = now()
            self._ensure_bank(db, bank, ts)
            row = db.execute("SELECT embedder FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
            if row["embedder"] and row["embedder"] != name:
                raise StoreError(
                    409,
                    f"Bank '{bank}' holds vectors of the embedder {row['embedder']!r}, not {name!r}: "
                    "re-embed it before writing with another model",
                )
            replaced: list[str] = []
            seqs = [0] * len(items)
            by_doc: dict[str, list[int]] = {}
            for i, item in enumerate(items):
                by_doc.setdefault(item.document_id or uuid.uuid4().hex, []).append(i)
            for doc, positions in by_doc.items():
                replaced += [
                    r[0]
                    for r in db.execute("SELECT id FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, doc))
                ]
                db.execute("DELETE FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, doc))
                first = items[positions[0]]
                text = "\n".join(items[p].content for p in positions)
                tags = sorted({*document_tags, *(t for p in positions for t in items[p].tags)})
                params = {
                    k: v
                    for k, v in {
                        "context": first.context,
                        "metadata": first.metadata,
                        "event_date": first.timestamp,
                    }.items()
                    if v
                }
                db.execute(
                    "INSERT INTO store_documents (bank_id, id, original_text, content_hash, tags, metadata, retain_params,"
                    " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (bank_id, id) DO UPDATE SET"
                    " original_text = excluded.original_text, content_hash = excluded.content_hash, tags = excluded.tags,"
                    " metadata = excluded.metadata, retain_params = excluded.retain_params, updated_at = excluded.updated_at",
                    (
                        bank,
                        doc,
                        text,
                        hashlib.sha256(text.encode()).hexdigest(),
                        json.dumps(tags, ensure_ascii=False),
                        json.dumps(first.metadata, ensure_ascii=False) if first.metadata else None,
                        json.dumps(params, ensure_ascii=False) if params else None,
                        ts,
                        ts,
                    ),
                )
                for p in positions:
                    item = items[p]
                    unit_tags = sorted({*document_tags, *item.tags})
                    cursor = db.execute(
                        "INSERT INTO store_units (id, bank_id, document_id, text, terms, context, fact_type, tags, metadata,"
                        " mentioned_at, created_at, updated_at, embedder, embedding, tokens)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            ids[p],
                            bank,
                            doc,
                            item.content,
                            index_text(item.content),
                            item.context or "",
                            "world",
                            json.dumps(unit_tags, ensure_ascii=False),
                            json.dumps(item.metadata or {}, ensure_ascii=False),
                            rules.mentioned_at(item.timestamp, ts),
                            ts,
                            ts,
                            name,
                            vectors[p].astype(np.float32).tobytes(),
                            costs[p],
                        ),
                    )
                    seqs[p] = cursor.lastrowid or 0  # always set by an INSERT into this table
            db.execute(
                "UPDATE store_banks SET embedder = COALESCE(embedder, ?), last_write_at = ?, last_document_at = ?,"
                " updated_at = ? WHERE bank_id = ?",
                (name, ts, ts, ts, bank),
            )
            return replaced, seqs

        replaced, seqs = await self.ledger.write(write)
        # Under the index lock: a concurrent first load either read these rows or finishes before
        # they are added here (adding an id twice keeps the newer row).
        async with self._index_lock:
            index = self._indexes.get(bank)
            if index is not None:
                index.remove(replaced)
                index.add(ids, vectors, seqs, costs)
        return len(items)

    # async retains: acknowledged once their payload is committed; worked off in the background.

    async def submit(self, bank: str, payload: dict[str, Any], items_count: int) -> str:
        operation_id = str(uuid.uuid4())

        def write(db: sqlite3.Connection) -> None:
            ts = now()
            self._ensure_bank(db, bank, ts)
            db.execute(
                "INSERT INTO store_operations (id, bank_id, type, status, items_count, payload, created_at, updated_at)"
                " VALUES (?, ?, 'batch_retain', 'pending', ?, ?, ?, ?)",
                (operation_id, bank, items_count, json.dumps(payload, ensure_ascii=False), ts, ts),
            )

        await self.ledger.write(write)
        self._spawn(self._run_operation(operation_id))
        return operation_id

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def held_documents(self, bank: str, document_ids: Sequence[str]) -> set[str]:
        """Which of ``document_ids`` the store holds in ``bank``: written, or in an async retain it
        acknowledged and has not finished yet."""
        wanted = set(document_ids)

        def read(db: sqlite3.Connection) -> set[str]:
            held: set[str] = set()
            for chunk in chunked(sorted(wanted)):
                marks = ",".join("?" * len(chunk))
                held.update(
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM store_documents WHERE bank_id = ? AND id IN ({marks})",  # noqa: S608
                        (bank, *chunk),
                    )
                )
            for (payload,) in db.execute(
                "SELECT payload FROM store_operations WHERE bank_id = ? AND status = 'pending'", (bank,)
            ):
                held.update(
                    i.get("document_id") for i in json.loads(payload)["items"] if i.get("document_id") in wanted
                )
            return held

        return await self.ledger.read(read) if wanted else set()

    async def resume(self) -> int:
        """Work off the async retains a previous process acknowledged but did not finish."""
        pending = await self.ledger.read(
            lambda db: [
                r[0] for r in db.execute("SELECT id FROM store_operations WHERE status = 'pending' ORDER BY created_at")
            ]
        )
        for operation_id in pending:
            self._spawn(self._run_operation(operation_id))
        return len(pending)

    async def _run_operation(self, operation_id: str) -> None:
        row = await self.ledger.read(
            lambda db: db.execute("SELECT * FROM store_operations WHERE id = ?", (operation_id,)).fetchone()
        )
        if row is None or row["status"] != "pending":
            return
        payload = json.loads(row["payload"])
        status, error = "completed", None
        try:
            await self.retain(
                row["bank_id"], [RetainItem(**i) for i in payload["items"]], payload.get("document_tags") or []
            )
        except Exception as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            log.error("async_retain_failed", operation_id=operation_id, error=error)
        ts = now()
        # A failed operation keeps its payload: nothing acknowledged is dropped, and it can be retried.
        await self.ledger.write(
            lambda db: db.execute(
                "UPDATE store_operations SET status = ?, error_message = ?, updated_at = ?, completed_at = ?,"
                " payload = CASE WHEN ? = 'completed' THEN NULL ELSE payload END WHERE id = ?",
                (status, error, ts, ts, status, operation_id),
            )
        )

    async def drain(self, grace: float = 10.0) -> None:
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()

    async def operation(self, bank: str, operation_id: str) -> dict[str, Any]:
        """An async retain's status. As in Hindsight, an id that is not a UUID is a ``400`` and an
        unknown one is answered with ``status: not_found`` (the bank is not looked up)."""
        obey(rules.check_operation_id, operation_id)
        row = await self.ledger.read(
            lambda db: db.execute(
                "SELECT * FROM store_operations WHERE bank_id = ? AND id = ?", (bank, operation_id)
            ).fetchone()
        )
        found = row is not None
        return {
            "operation_id": operation_id,
            "status": row["status"] if found else "not_found",
            "operation_type": row["type"] if found else None,
            "id": operation_id,
            "task_type": row["type"] if found else None,
            "mental_model_id": None,
            "created_at": row["created_at"] if found else None,
            "updated_at": row["updated_at"] if found else None,
            "completed_at": row["completed_at"] if found else None,
            "error_message": row["error_message"] if found else None,
            "retry_count": 0 if found else None,
            "next_retry_at": None,
            "progress": None,
            "result_metadata": None,
            "details": None,
            "child_operations": None,
            "task_payload": None,
        }

    # -- recall ---------------------------------------------------------------------------

    async def _index(self, bank: str) -> BankIndex:
        index = self._indexes.get(bank)
        if index is not None:
            return index
        async with self._index_lock:
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

    async def recall(
        self,
        bank: str,
        request: Mapping[str, Any],
        *,
        arms: tuple[str, ...] = ("semantic", "keyword"),
        explain: bool = False,
    ) -> dict[str, Any]:
        """Hybrid recall. ``arms`` selects the retrievers (both by default; one alone for the
        retrieval-quality benchmark). With ``explain``, the answer also carries ``explain``: the
        query vector's head, the full-text query, and every candidate either retriever produced
        with its ranks and scores, returned or excluded and why."""
        query: str = request["query"]
        types = request.get("types")
        predicate = tagfilter.build(request.get("tags"), request.get("tags_match", "any"), request.get("tag_groups"))
        pool = BUDGET_POOL.get(request.get("budget") or "mid", 300)
        max_tokens = 4096 if request.get("max_tokens") is None else int(request["max_tokens"])
        # The query is embedded while the bank is looked up and the keyword arm runs (neither
        # needs the vector): the embedding is most of a recall's time. When the bank's vector index
        # is loaded already, the same thread searches it too: a hand-off between threads costs
        # ~0.7 ms on this kind of machine.
        loaded = self._indexes.get(bank)

        def embed_and_search() -> tuple[Vector, list[tuple[str, float]] | None]:
            vector = self.embedder.query(query)
            return vector, None if loaded is None else loaded.search(vector, pool)

        embedding = (
            asyncio.ensure_future(asyncio.to_thread(embed_and_search)) if query.strip() and "semantic" in arms else None
        )
        try:
            await self.require_bank(bank)
        except BaseException:
            if embedding is not None:
                embedding.cancel()
            raise
        index = await self._index(bank)
        words = query_terms(query) if "keyword" in arms else []
        fts: str | None = None
        # Candidates' row keys and token costs, from the full-text arm (the vector index has its own).
        seq_of: dict[str, int] = {}
        cost_of: dict[str, int] = {}

        def keyword(db: sqlite3.Connection, limit: int) -> list[tuple[str, float]]:
            nonlocal fts
            if not words:
                return []
            fts = match_query(selective_terms(db, words, self._terms))
            if fts is None:
                return []
            # Rank in the index first (FTS5 keeps only the best ``limit``), then filter by bank and
            # state; the over-fetch keeps other banks' matches from crowding a bank out.
            rows = db.execute(
                "SELECT u.id, f.rank, f.rowid, u.tokens FROM (SELECT rowid, rank FROM store_units_fts"
                " WHERE store_units_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN store_units u ON u.seq = f.rowid"
                " WHERE u.bank_id = ? AND u.state = 'valid' ORDER BY f.rank",
                (fts, limit * 4, bank),
            ).fetchall()
            seq_of.update((r[0], r[2]) for r in rows[:limit])
            cost_of.update((r[0], r[3]) for r in rows[:limit])
            return [(r[0], -float(r[1])) for r in rows[:limit]]

        excluded: dict[str, str] = {}

        def filter_rows(db: sqlite3.Connection, ids: list[str]) -> set[str]:
            """The candidates the status, ``types`` and tag filters admit (the others' reasons in
            ``excluded``)."""
            kept: set[str] = set()
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id, fact_type, tags, state FROM store_units WHERE id IN ({marks})"  # noqa: S608
                for r in db.execute(sql, chunk):
                    if r["state"] != "valid":
                        excluded[r["id"]] = f"status: {r['state']}"
                    elif types is not None and r["fact_type"] not in types:
                        excluded[r["id"]] = f"type {r['fact_type']} not in types {list(types)}"
                    elif predicate is not None and not predicate(frozenset(json.loads(r["tags"]))):
                        excluded[r["id"]] = "tag filter"
                    else:
                        kept.add(r["id"])
            return kept

        def within_budget(ranked: list[str]) -> list[str]:
            """The ranked memories that fit ``max_tokens``, as Hindsight picks them
            (``select_facts_within_budget``): in rank order, one that does not fit is skipped and
            the next ones are still tried; when none fits, the first alone; none at all for a
            budget of 0 or less. Costs come from the arms (no row is read for this); a candidate
            with none left the vector index (archived or replaced) since it was ranked."""
            picked: list[str] = []
            first: str | None = None
            used = 0
            if max_tokens <= 0:
                return picked
            for memory_id in ranked:
                cost = cost_of.get(memory_id, index.tokens.get(memory_id))
                if cost is None:
                    continue
                if used + cost > max_tokens:
                    first = first or memory_id
                    continue
                used += cost
                picked.append(memory_id)
            return picked or ([first] if first is not None else [])

        def fetch(db: sqlite3.Connection, picked: list[str]) -> list[RecallRow]:
            """The picked rows, in their order, by primary key; one archived or replaced since it was
            ranked is left out."""
            cursor = db.cursor()
            cursor.row_factory = None  # plain tuples: ~200 rows, each field read once
            found: dict[str, RecallRow] = {}
            keys = [k for k in (seq_of.get(m, index.seq.get(m)) for m in picked) if k is not None]
            for start in range(0, len(keys), 900):  # under SQLite's limit on bound variables
                chunk = keys[start : start + 900]
                sql = f"SELECT {RECALL_COLUMNS} FROM store_units WHERE seq IN ({','.join('?' * len(chunk))})"  # noqa: S608
                found.update((r[0], r) for r in cursor.execute(sql, chunk))
            return [r for m in picked if (r := found.get(m)) is not None and r[-1] == "valid"]  # r[-1]: state

        async def semantic_arm(limit: int) -> list[tuple[str, float]]:
            if embedding is None:
                return []
            vector, searched = await embedding
            if searched is not None and index is loaded and limit == pool:
                return searched
            return await asyncio.to_thread(index.search, vector, limit)

        limit = pool
        for _ in range(4):  # widen the pools when the filters leave too few
            # The two retrievers run at once (numpy and SQLite both release the GIL).
            semantic, lexical = await asyncio.gather(
                semantic_arm(limit),
                self.ledger.read(partial(keyword, limit=limit)),
            )
            candidates = list(dict.fromkeys([*(i for i, _ in semantic), *(i for i, _ in lexical)]))
            if types is not None or predicate is not None or explain:
                kept = await self.ledger.read(partial(filter_rows, ids=candidates))
            else:  # both retrievers hold only this bank's valid memories: nothing to look up
                kept = set(candidates)
            exhausted = len(semantic) < limit and len(lexical) < limit
            if len(kept) >= min(pool, 50) or exhausted:
                break
            limit *= 4
        sem = {i: s for i, s in semantic if i in kept}
        lex = {i: s for i, s in lexical if i in kept}
        fused: dict[str, float] = {}
        for ranking in (sorted(sem, key=lambda i: -sem[i]), sorted(lex, key=lambda i: -lex[i])):
            for rank, memory_id in enumerate(ranking):
                fused[memory_id] = fused.get(memory_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        votes = await self._votes(bank)
        for memory_id in fused:
            if memory_id in votes:
                fused[memory_id] += FEEDBACK_STEP * max(-FEEDBACK_CAP, min(FEEDBACK_CAP, votes[memory_id]))
        top_lex = max(lex.values(), default=0.0) or 1.0
        chosen = await self.ledger.read(partial(fetch, picked=within_budget(sorted(fused, key=lambda i: -fused[i]))))
        used = sum(cost_of.get(r[0], index.tokens.get(r[0], 0)) for r in chosen)
        results: list[dict[str, Any]] = []
        for memory_id, text, context, fact_type, tags, metadata, document_id, mentioned, start, end, _ in chosen:
            results.append(
                {
                    "id": memory_id,
                    "text": text,
                    "type": fact_type,
                    "entities": None,
                    "context": context or None,
                    "occurred_start": start,
                    "occurred_end": end,
                    "mentioned_at": mentioned,
                    "document_id": document_id,
                    "metadata": _loads(metadata, {}),
                    "chunk_id": None,
                    "tags": _loads(tags, []),
                    "source_fact_ids": None,
                    "scores": {
                        "final": fused[memory_id],
                        "reranker": None,
                        "semantic": sem.get(memory_id),
                        "keyword": (lex[memory_id] / top_lex) if memory_id in lex else None,
                    },
                    "attachments": None,
                }
            )
        trace = None
        if request.get("trace"):
            trace = {
                "engine": "memwarden-local",
                "embedder": self.embedder.name,
                "vector_index": index.kind,
                "fts_query": fts,
                "semantic_candidates": len(semantic),
                "keyword_candidates": len(lexical),
                "admitted": len(kept),
                "excluded_by_filters": len(candidates) - len(kept),
                "fusion": f"reciprocal rank fusion, k={RRF_K}",
                "max_tokens": max_tokens,
                "tokens_used": used,
            }
        answer: dict[str, Any] = {
            "results": results,
            "trace": trace,
            "entities": None,
            "chunks": None,
            "source_facts": None,
            "source_facts_truncated": None,
        }
        if explain:
            answer["explain"] = await self._explain(
                None if embedding is None else (await embedding)[0],
                fts,
                semantic,
                lexical,
                fused,
                [r[0] for r in chosen],
                excluded,
                max_tokens,
                used,
                votes,
            )
        return answer

    async def _explain(
        self,
        vector: Vector | None,
        fts: str | None,
        semantic: list[tuple[str, float]],
        lexical: list[tuple[str, float]],
        fused: Mapping[str, float],
        returned: list[str],
        excluded: Mapping[str, str],
        max_tokens: int,
        used: int,
        votes: Mapping[str, int],
    ) -> dict[str, Any]:
        """The white-box account of one recall (SPEC §5), in the order the candidates ranked."""
        head = [round(float(x), 5) for x in vector[:8]] if vector is not None else None
        sem_rank = {i: n for n, (i, _) in enumerate(semantic, 1)}
        lex_rank = {i: n for n, (i, _) in enumerate(lexical, 1)}
        sem, lex = dict(semantic), dict(lexical)
        ids = list(dict.fromkeys([*sem, *lex]))
        shown = set(returned)

        def read(db: sqlite3.Connection) -> dict[str, sqlite3.Row]:
            out: dict[str, sqlite3.Row] = {}
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id, text, document_id, tags, fact_type FROM store_units WHERE id IN ({marks})"  # noqa: S608
                out.update({r["id"]: r for r in db.execute(sql, chunk)})
            return out

        rows = await self.ledger.read(read)
        order = sorted(ids, key=lambda i: (-fused.get(i, -1.0), sem_rank.get(i, 10**9), lex_rank.get(i, 10**9)))
        candidates = []
        for memory_id in order:
            r = rows.get(memory_id)
            if memory_id in shown:
                outcome, reason = "returned", None
            elif memory_id in excluded:
                outcome, reason = "excluded", excluded[memory_id]
            elif r is None:
                outcome, reason = "excluded", "deleted since it was ranked"
            else:
                outcome, reason = "excluded", f"cut by the max_tokens budget ({used} of {max_tokens} tokens used)"
            candidates.append(
                {
                    "id": memory_id,
                    "text": r["text"] if r is not None else None,
                    "document_id": r["document_id"] if r is not None else None,
                    "tags": _loads(r["tags"], []) if r is not None else None,
                    "type": r["fact_type"] if r is not None else None,
                    "semantic": {"rank": sem_rank[memory_id], "score": sem[memory_id]} if memory_id in sem else None,
                    "keyword": {"rank": lex_rank[memory_id], "score": lex[memory_id]} if memory_id in lex else None,
                    "fused": fused.get(memory_id),
                    "feedback": votes.get(memory_id, 0),
                    "outcome": outcome,
                    "reason": reason,
                }
            )
        return {
            "embedder": self.embedder.name,
            "query_vector_head": head,
            "fts_query": fts,
            "arms": {"semantic": len(semantic), "keyword": len(lexical)},
            "fusion": f"reciprocal rank fusion, k={RRF_K}",
            "max_tokens": max_tokens,
            "tokens_used": used,
            "candidates": candidates,
        }

    # -- feedback ------------------------------------------------------------------------------

    async def _votes(self, bank: str) -> dict[str, int]:
        votes = self._feedback.get(bank)
        if votes is None:
            rows = await self.ledger.read(
                lambda db: db.execute(
                    "SELECT id, feedback FROM store_units WHERE bank_id = ? AND feedback != 0", (bank,)
                ).fetchall()
            )
            votes = self._feedback[bank] = {r[0]: r[1] for r in rows}
        return votes

    async def add_feedback(self, bank: str, document_id: str, score: int) -> list[str]:
        """Add ``score`` to the net votes of a document's facts (they rank a little higher or
        lower in recall); the facts' ids."""

        def write(db: sqlite3.Connection) -> list[tuple[str, int]]:
            db.execute(
                "UPDATE store_units SET feedback = feedback + ? WHERE bank_id = ? AND document_id = ?",
                (score, bank, document_id),
            )
            return [
                (r[0], r[1])
                for r in db.execute(
                    "SELECT id, feedback FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id)
                )
            ]

        units = await self.ledger.write(write)
        votes = await self._votes(bank)
        for unit_id, net in units:
            if net:
                votes[unit_id] = net
            else:
                votes.pop(unit_id, None)
        return [u for u, _ in units]

    # -- a change of embedder: a planned re-embed, never a mix -------------------------------

    async def reembed(self, bank: str, *, batch: int = 256) -> dict[str, Any]:
        """Embed every memory of ``bank`` that the current embedder did not make, then record it as
        the bank's embedder. Until then the bank refuses writes and recall leaves out vectors of
        the other model (keyword retrieval only for those memories). Resumable: rows already
        re-embedded are skipped."""
        row = await self.require_bank(bank)
        name = self.embedder.name
        before = row["embedder"]
        done = 0
        while True:
            todo: list[tuple[str, str]] = await self.ledger.read(
                lambda db: db.execute(
                    "SELECT id, text FROM store_units WHERE bank_id = ? AND (embedder IS NULL OR embedder != ?) LIMIT ?",
                    (bank, name, batch),
                ).fetchall()
            )
            if not todo:
                break
            vectors = await asyncio.to_thread(self.embedder.passages, [t for _, t in todo])

            def write(db: sqlite3.Connection, todo: list[tuple[str, str]] = todo, vectors: Vector = vectors) -> None:
                db.executemany(
                    "UPDATE store_units SET embedding = ?, embedder = ? WHERE id = ?",
                    [(vectors[i].tobytes(), name, memory_id) for i, (memory_id, _) in enumerate(todo)],
                )

            await self.ledger.write(write)
            done += len(todo)

        def finish(db: sqlite3.Connection) -> None:
            db.execute("UPDATE store_banks SET embedder = ?, updated_at = ? WHERE bank_id = ?", (name, now(), bank))
            append_events(
                db,
                [
                    AuditEvent(
                        action="update",
                        bank=bank,
                        source="store",
                        rule="store.reembed",
                        reason=f"re-embedded {done} memories with {name}",
                        before={"embedder": before},
                        after={"embedder": name, "memories": done},
                    )
                ],
            )

        await self.ledger.write(finish)
        async with self._index_lock:
            self._indexes.pop(bank, None)  # rebuilt from the new vectors on next use
        return {"bank_id": bank, "embedder": name, "previous_embedder": before, "reembedded": done}

    # -- reading and curating memories ----------------------------------------------------

    async def list_units(self, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
        await self.require_bank(bank)
        limit, offset = int(params.get("limit", 100)), int(params.get("offset", 0))
        state = params.get("state") or "valid"
        if state not in ("valid", "invalidated"):
            raise StoreError(400, f"Invalid state '{state}': expected 'valid' or 'invalidated'.")
        where, args = ["bank_id = ?", "state = ?"], [bank, state]
        if params.get("type"):
            where.append("fact_type = ?")
            args.append(params["type"])
        if params.get("document_id"):
            where.append("document_id = ?")
            args.append(params["document_id"])
        if params.get("q"):
            where.append("text LIKE ?")
            args.append(f"%{params['q']}%")
        predicate = tagfilter.build(params.get("tags") or None, params.get("tags_match") or "any", None)
        clause = " AND ".join(where)

        def read(db: sqlite3.Connection) -> tuple[list[sqlite3.Row], int]:
            if predicate is None:
                total = db.execute(f"SELECT COUNT(*) FROM store_units WHERE {clause}", args).fetchone()[0]  # noqa: S608
                rows = db.execute(
                    f"SELECT * FROM store_units WHERE {clause} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608
                    (*args, limit, offset),
                ).fetchall()
                return rows, int(total)
            everything = db.execute(f"SELECT * FROM store_units WHERE {clause} ORDER BY seq DESC", args).fetchall()  # noqa: S608
            matching = [r for r in everything if predicate(frozenset(_loads(r["tags"], [])))]
            return matching[offset : offset + limit], len(matching)

        rows, total = await self.ledger.read(read)
        return {"items": [unit_list_item(r) for r in rows], "total": total, "limit": limit, "offset": offset}

    async def _unit(self, bank: str, memory_id: str) -> sqlite3.Row:
        obey(rules.check_memory_id, memory_id)
        await self.require_bank(bank)
        row: sqlite3.Row | None = await self.ledger.read(
            lambda db: db.execute(
                "SELECT * FROM store_units WHERE bank_id = ? AND id = ?", (bank, memory_id)
            ).fetchone()
        )
        if row is None:
            raise StoreError(404, f"Memory unit '{memory_id}' not found")
        return row

    async def get_unit(self, bank: str, memory_id: str) -> dict[str, Any]:
        """A memory, archived ones included (``state`` says which), as Hindsight answers."""
        return unit_detail(await self._unit(bank, memory_id))  # world facts: no history/source fields

    async def update_unit(self, bank: str, memory_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """``PATCH`` a memory: text/context/dates/fact type, or ``state: invalidated`` (archive: out
        of recall and lists, kept) and ``state: valid`` (restore). Audited as ``update`` /
        ``archive`` / ``restore``. ``changes`` holds the fields the client set (validated as
        Hindsight's ``UpdateMemoryRequest``; a date set to null or "" clears it). An archived memory
        is restored before it can be edited, as in Hindsight."""
        row = await self._unit(bank, memory_id)
        state = changes.get("state")
        text = changes.get("text")
        if text is not None and not text.strip():
            raise StoreError(400, "text must not be empty.")
        edits = {k: v for k, v in changes.items() if k in ("context", "fact_type") and v is not None}
        edits.update(
            {
                k: obey(rules.edit_date, changes[k] or "")
                for k in ("occurred_start", "occurred_end", "mentioned_at")
                if k in changes
            }
        )
        # entities are taken (the store keeps none), and count as an edit, as in Hindsight
        if (text is not None or edits or changes.get("entities") is not None) and row["state"] != "valid":
            raise StoreError(400, "Cannot edit an invalidated memory; revert it to 'valid' first.")
        vector = await asyncio.to_thread(self.embedder.passages, [text]) if text is not None else None

        def write(db: sqlite3.Connection) -> sqlite3.Row:
            ts = now()
            sets: list[str] = ["updated_at = ?"]
            args: list[Any] = [ts]
            before: dict[str, Any] = {}
            after: dict[str, Any] = {}
            if text is not None and text != row["text"]:
                sets += ["text = ?", "terms = ?", "embedding = ?", "embedder = ?", "edited_at = ?", "tokens = ?"]
                args += [
                    text,
                    index_text(text),
                    vector[0].tobytes() if vector is not None else None,
                    self.embedder.name,
                    ts,
                    token_estimate(text),
                ]
                before["text"], after["text"] = row["text"], text
            for key, value in edits.items():
                if value != row[key]:
                    sets.append(f"{key} = ?")
                    args.append(value)
                    before[key], after[key] = row[key], value
            action = "update"
            if state == "invalidated" and row["state"] != "invalidated":
                sets += ["state = 'invalidated'", "invalidation_reason = ?", "invalidated_at = ?"]
                args += [changes.get("reason"), ts]
                before["state"], after["state"], action = row["state"], "invalidated", "archive"
            elif state == "valid" and row["state"] != "valid":
                sets += ["state = 'valid'", "invalidation_reason = NULL", "invalidated_at = NULL"]
                before["state"], after["state"], action = row["state"], "valid", "restore"
            db.execute(f"UPDATE store_units SET {', '.join(sets)} WHERE id = ?", (*args, memory_id))  # noqa: S608
            if after:
                append_events(
                    db,
                    [
                        AuditEvent(
                            action=action,
                            bank=bank,
                            memory_id=memory_id,
                            source="store",
                            reason=changes.get("reason"),
                            before=before,
                            after=after,
                        )
                    ],
                )
            result: sqlite3.Row = db.execute("SELECT * FROM store_units WHERE id = ?", (memory_id,)).fetchone()
            return result

        updated = await self.ledger.write(write)
        index = self._indexes.get(bank)
        if index is not None:
            if updated["state"] != "valid":
                index.remove([memory_id])
            elif vector is not None or row["state"] != "valid":
                vec = vector[0] if vector is not None else np.frombuffer(updated["embedding"], dtype=np.float32)
                index.add([memory_id], vec[None, :], [updated["seq"]], [updated["tokens"]])
        return unit_detail(updated)

    async def history(self, bank: str, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes, from the audit log (oldest first)."""

        def read(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT ts, action, source, reason, before, after FROM audit_events WHERE memory_id = ? AND bank = ?"
                " ORDER BY seq",
                (memory_id, bank),
            ).fetchall()
            return [
                {
                    "changed_at": r["ts"],
                    "action": r["action"],
                    "source": r["source"],
                    "reason": r["reason"],
                    "before": _loads(r["before"], None),
                    "after": _loads(r["after"], None),
                }
                for r in rows
            ]

        result: list[dict[str, Any]] = await self.ledger.read(read)
        return result

    async def unit_history(self, bank: str, memory_id: str) -> list[dict[str, Any]]:
        row = await self._unit(bank, memory_id)
        if row["state"] != "valid":
            raise StoreError(404, f"Memory unit '{memory_id}' not found")
        return await self.history(bank, memory_id)

    async def delete_units(self, bank: str, fact_type: str | None) -> dict[str, Any]:
        await self.require_bank(bank)

        def write(db: sqlite3.Connection) -> tuple[int, list[str]]:
            where, args = "bank_id = ?", [bank]
            if fact_type:
                where, args = "bank_id = ? AND fact_type = ?", [bank, fact_type]
            ids = [r[0] for r in db.execute(f"SELECT id FROM store_units WHERE {where}", args)]  # noqa: S608
            db.execute(f"DELETE FROM store_units WHERE {where}", args)  # noqa: S608
            if not fact_type:
                db.execute("DELETE FROM store_documents WHERE bank_id = ?", (bank,))
            return len(ids), ids

        n, ids = await self.ledger.write(write)
        index = self._indexes.get(bank)
        if index is not None:
            index.remove(ids)
        which = f" of type '{fact_type}'" if fact_type else ""
        return {"success": True, "message": f"Cleared {n} memory unit(s){which} from bank '{bank}'", "deleted_count": n}

    # -- documents, tags, stats -----------------------------------------------------------

    async def list_documents(self, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
        await self.require_bank(bank)
        limit, offset = int(params.get("limit", 100)), int(params.get("offset", 0))
        predicate = tagfilter.build(params.get("tags") or None, params.get("tags_match") or "any", None)
        q = params.get("q")

        def read(db: sqlite3.Connection) -> tuple[list[tuple[sqlite3.Row, int]], int]:
            counts = dict(
                db.execute(
                    "SELECT document_id, COUNT(*) FROM store_units WHERE bank_id = ? GROUP BY document_id", (bank,)
                ).fetchall()
            )
            rows = db.execute(
                "SELECT * FROM store_documents WHERE bank_id = ? ORDER BY created_at DESC, id", (bank,)
            ).fetchall()
            kept = [
                r
                for r in rows
                if (predicate is None or predicate(frozenset(_loads(r["tags"], []))))
                and (not q or q.lower() in (r["id"] + " " + (r["original_text"] or "")).lower())
            ]
            return [(r, counts.get(r["id"], 0)) for r in kept[offset : offset + limit]], len(kept)

        rows, total = await self.ledger.read(read)
        return {
            "items": [document_item(r, n) for r, n in rows],
            "total": total,
            "limit": limit,
            "offset": offset,
            "total_is_estimate": False,
        }

    async def get_document(self, bank: str, document_id: str) -> dict[str, Any]:
        await self.require_bank(bank)

        def read(db: sqlite3.Connection) -> tuple[sqlite3.Row | None, dict[str, int]]:
            row = db.execute(
                "SELECT * FROM store_documents WHERE bank_id = ? AND id = ?", (bank, document_id)
            ).fetchone()
            types = dict(
                db.execute(
                    "SELECT fact_type, COUNT(*) FROM store_units WHERE bank_id = ? AND document_id = ? GROUP BY fact_type",
                    (bank, document_id),
                ).fetchall()
            )
            return row, types

        row, types = await self.ledger.read(read)
        if row is None:
            raise StoreError(404, "Document not found")
        item = document_item(row, sum(types.values()))
        return {
            "id": item["id"],
            "bank_id": bank,
            "original_text": row["original_text"],
            "content_hash": row["content_hash"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "memory_unit_count": item["memory_unit_count"],
            "nodes_by_fact_type": {
                "world": types.get("world", 0),
                "experience": types.get("experience", 0),
                "observation": 0,
            },
            "tags": item["tags"],
            "document_metadata": item["document_metadata"],
            "retain_params": item["retain_params"],
            "observation_scopes": None,
            "attachments": None,
        }

    async def update_document_tags(self, bank: str, document_id: str, tags: Sequence[str]) -> dict[str, Any]:
        await self.get_document(bank, document_id)

        def write(db: sqlite3.Connection) -> None:
            encoded = json.dumps(sorted(set(tags)), ensure_ascii=False)
            ts = now()
            db.execute(
                "UPDATE store_documents SET tags = ?, updated_at = ? WHERE bank_id = ? AND id = ?",
                (encoded, ts, bank, document_id),
            )
            db.execute(
                "UPDATE store_units SET tags = ?, updated_at = ? WHERE bank_id = ? AND document_id = ?",
                (encoded, ts, bank, document_id),
            )

        await self.ledger.write(write)
        return {"success": True}

    async def delete_document(self, bank: str, document_id: str) -> dict[str, Any]:
        await self.get_document(bank, document_id)

        def write(db: sqlite3.Connection) -> list[str]:
            ids = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id)
                )
            ]
            db.execute("DELETE FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id))
            db.execute("DELETE FROM store_documents WHERE bank_id = ? AND id = ?", (bank, document_id))
            return ids

        ids = await self.ledger.write(write)
        index = self._indexes.get(bank)
        if index is not None:
            index.remove(ids)
        return {
            "success": True,
            "message": f"Document '{document_id}' and {len(ids)} associated memory units deleted successfully",
            "document_id": document_id,
            "memory_units_deleted": len(ids),
        }

    async def tags(self, bank: str, q: str | None, limit: int, offset: int) -> dict[str, Any]:
        await self.require_bank(bank)

        def read(db: sqlite3.Connection) -> dict[str, int]:
            counts: dict[str, int] = {}
            for (raw,) in db.execute("SELECT tags FROM store_units WHERE bank_id = ? AND state = 'valid'", (bank,)):
                for tag in json.loads(raw):
                    counts[tag] = counts.get(tag, 0) + 1
            return counts

        counts = await self.ledger.read(read)
        names = sorted(counts, key=lambda n: (-counts[n], n))  # Hindsight's order: count, then tag
        if q:
            pattern = rules.tag_pattern(q)
            names = [n for n in names if pattern.fullmatch(n)]
        page = names[offset : offset + limit]
        return {
            "items": [{"tag": n, "count": counts[n]} for n in page],
            "total": len(names),
            "limit": limit,
            "offset": offset,
        }

    async def stats(self, bank: str) -> dict[str, Any]:
        await self.require_bank(bank)

        def read(db: sqlite3.Connection) -> tuple[dict[str, int], int, dict[str, int], sqlite3.Row]:
            types = dict(
                db.execute(
                    "SELECT fact_type, COUNT(*) FROM store_units WHERE bank_id = ? AND state = 'valid' GROUP BY fact_type",
                    (bank,),
                ).fetchall()
            )
            docs = db.execute("SELECT COUNT(*) FROM store_documents WHERE bank_id = ?", (bank,)).fetchone()[0]
            ops = dict(
                db.execute(
                    "SELECT status, COUNT(*) FROM store_operations WHERE bank_id = ? GROUP BY status", (bank,)
                ).fetchall()
            )
            row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
            return types, int(docs), ops, row

        types, docs, ops, row = await self.ledger.read(read)
        return {
            "bank_id": bank,
            "total_nodes": sum(types.values()),
            "total_links": 0,
            "total_documents": docs,
            "nodes_by_fact_type": types,
            "links_by_link_type": {"temporal": 0, "semantic": 0, "entity": 0},  # no graph here
            "links_by_fact_type": {},
            "links_breakdown": {},
            "pending_operations": ops.get("pending", 0),
            "failed_operations": ops.get("failed", 0),
            "operations_by_status": ops,
            "last_consolidated_at": None,
            "last_memory_write_at": row["last_write_at"],
            "pending_consolidation": 0,
            "failed_consolidation": 0,
            "total_observations": 0,
        }

    async def index_counts(self, bank: str) -> dict[str, Any]:
        """The bank's rows and its vectors from the current embedder, and (every bank) rows vs
        full-text entries: the health report's consistency check of the store's indexes."""
        name = self.embedder.name

        def read(db: sqlite3.Connection) -> dict[str, Any]:
            row = db.execute(
                "SELECT count(*) AS rows_, sum(embedding IS NOT NULL AND embedder = ?) AS vectors FROM store_units"
                " WHERE bank_id = ?",
                (name, bank),
            ).fetchone()
            total_rows = db.execute("SELECT count(*) FROM store_units").fetchone()[0]
            fts = db.execute("SELECT count(*) FROM store_units_fts_docsize").fetchone()[0]
            return {
                "rows": row["rows_"],
                "vectors": row["vectors"] or 0,
                "embedder": name,
                "all_banks_rows": total_rows,
                "all_banks_fulltext_entries": fts,
            }

        return await self.ledger.read(read)
