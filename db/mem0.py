"""The ledger as the Mem0 front reads it: memories by their Mem0 id, a bank's live memories, the
add events a client polls, and erasure.

A memory's Mem0 id is ``metadata.mem0_id`` of its item (every version of an updated memory carries
the id of the first), or, for a memory written by another front, its ledger id. Erasure keeps a
row (its id, status ``erased``, content hash) and drops everything that held its text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from memwarden.db.audit import AuditEvent, append_events, current_actor
from memwarden.db.common import chunked, now
from memwarden.db.records import MEMORY_RECORD, LedgerMemory, Mem0Event, MemoryEvent

MEM0_ID = "json_extract(item, '$.metadata.mem0_id')"


def rows_of(db: sqlite3.Connection, bank: str, mem0_id: str) -> list[LedgerMemory]:
    """Every version of the memory ``mem0_id`` in ``bank`` (any status), oldest first."""
    found = db.execute(
        f"SELECT {MEMORY_RECORD}, rowid AS seq_ FROM memories WHERE bank = ? AND {MEM0_ID} = ?"  # noqa: S608
        f" UNION SELECT {MEMORY_RECORD}, rowid AS seq_ FROM memories WHERE bank = ? AND id = ?",
        (bank, mem0_id, bank, mem0_id),
    ).fetchall()
    return [LedgerMemory.of(r) for r in sorted(found, key=lambda r: (r["created_at"], r["seq_"]))]


def live_row(db: sqlite3.Connection, bank: str, mem0_id: str) -> LedgerMemory | None:
    """The active version of ``mem0_id`` (None: unknown in this bank, or not active)."""
    for row in reversed(rows_of(db, bank, mem0_id)):
        if row.status == "active":
            return row
    return None


def live_rows(db: sqlite3.Connection, bank: str, tag_sets: Sequence[Sequence[str]] = ()) -> list[LedgerMemory]:
    """The bank's active memories, newest first; each of ``tag_sets`` narrows them to those holding
    one of its tags (an AND of ORs)."""
    return rows_with_tags(db, bank, tag_sets, ("active",))


TEXT_HOLDING = ("active", "archived", "pending", "review", "superseded", "failed")
# The versions whose text a reader of the Mem0 front may see (its history, an add's event): not one
# held for review (instructions aimed at the agent, a conflict) or rejected — never delivered.
SHOWN = ("active", "archived", "pending", "superseded", "failed")


def rows_with_tags(
    db: sqlite3.Connection, bank: str, tag_sets: Sequence[Sequence[str]], statuses: Sequence[str] = TEXT_HOLDING
) -> list[LedgerMemory]:
    """The bank's memories in ``statuses`` holding one tag of each of ``tag_sets``, newest first."""
    marks = ",".join("?" * len(statuses))
    where, args = ["bank = ?", f"status IN ({marks})"], [bank, *statuses]
    for tags in tag_sets:
        marks = ",".join("?" * len(tags))
        where.append(f"EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value IN ({marks}))")  # noqa: S608
        args += list(tags)
    found = db.execute(
        f"SELECT {MEMORY_RECORD} FROM memories WHERE {' AND '.join(where)} ORDER BY created_at DESC, rowid DESC",  # noqa: S608
        args,
    )
    return [LedgerMemory.of(r) for r in found]


def live_by_document(db: sqlite3.Connection, bank: str, document_ids: Sequence[str]) -> dict[str, LedgerMemory]:
    """The active memory of each of ``document_ids`` that has one."""
    out: dict[str, LedgerMemory] = {}
    for chunk in chunked(list(dict.fromkeys(document_ids))):
        marks = ",".join("?" * len(chunk))
        for row in db.execute(
            f"SELECT {MEMORY_RECORD} FROM memories WHERE bank = ? AND status = 'active' AND document_id IN ({marks})",  # noqa: S608
            (bank, *chunk),
        ):
            if row["document_id"] not in out:
                out[row["document_id"]] = LedgerMemory.of(row)
    return out


def rows_by_ids(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, LedgerMemory]:
    out: dict[str, LedgerMemory] = {}
    for chunk in chunked(list(dict.fromkeys(ids))):
        marks = ",".join("?" * len(chunk))
        for row in db.execute(f"SELECT {MEMORY_RECORD} FROM memories WHERE id IN ({marks})", tuple(chunk)):  # noqa: S608
            out[row["id"]] = LedgerMemory.of(row)
    return out


def events_of(db: sqlite3.Connection, memory_ids: Sequence[str]) -> list[MemoryEvent]:
    """The audit events of ``memory_ids``, in the chain's order."""
    out: list[MemoryEvent] = []
    for chunk in chunked(list(memory_ids)):
        marks = ",".join("?" * len(chunk))
        out += map(
            MemoryEvent.of,
            db.execute(
                f"SELECT seq, id, ts, memory_id, action, source, rule, reason, after FROM audit_events"  # noqa: S608
                f" WHERE memory_id IN ({marks}) ORDER BY seq",
                tuple(chunk),
            ),
        )
    return sorted(out, key=lambda e: e.seq)


# -- add events -----------------------------------------------------------------------------------


def record_event(
    db: sqlite3.Connection, *, event_id: str, bank: str, kind: str, request_id: str, results: list[dict[str, Any]]
) -> None:
    """An add's event: per item, the Mem0 id and ledger id it became (or none) and its verdict. No
    text: a poll reads that from the ledger, so an erased memory's event holds none."""
    db.execute(
        "INSERT INTO mem0_events (id, bank, kind, request_id, results, created_at) VALUES (?,?,?,?,?,?)",
        (event_id, bank, kind, request_id, json.dumps(results, ensure_ascii=False), now()),
    )


def event(db: sqlite3.Connection, bank: str, event_id: str) -> Mem0Event | None:
    row = db.execute("SELECT * FROM mem0_events WHERE id = ? AND bank = ?", (event_id, bank)).fetchone()
    return None if row is None else Mem0Event.of(row)


# -- erasure --------------------------------------------------------------------------------------


def erase(
    db: sqlite3.Connection, bank: str, memory_ids: Sequence[str], *, source: str, reason: str, request_id: str
) -> list[AuditEvent]:
    """Erase ``memory_ids``: status ``erased``, their text, item, tags and topic key dropped, and
    the bodies of settled outbox entries that carried them; one ``erase`` event each, naming the
    content hash only. The caller has taken them out of the backend."""
    ts, events = now(), []
    for memory_id in memory_ids:
        row = db.execute(
            "SELECT status, content_hash FROM memories WHERE id = ? AND bank = ?", (memory_id, bank)
        ).fetchone()
        if row is None or row["status"] == "erased":
            continue
        db.execute(
            "UPDATE memories SET status = 'erased', content = '', item = '{}', tags = '[]', topic_key = NULL,"
            " reason = ?, updated_at = ? WHERE id = ?",
            (reason, ts, memory_id),
        )
        events.append(
            AuditEvent(
                action="erase",
                bank=bank,
                memory_id=memory_id,
                actor=current_actor(),
                source=source,
                reason=reason,
                before={"status": row["status"]},
                after={"status": "erased", "content_hash": row["content_hash"]},
                request_id=request_id,
            )
        )
    for chunk in chunked(list(memory_ids)):
        marks = ",".join("?" * len(chunk))
        db.execute(
            "UPDATE outbox SET body = NULL WHERE bank = ? AND settled_at IS NOT NULL AND EXISTS"  # noqa: S608
            f" (SELECT 1 FROM json_each(outbox.memory_ids) WHERE value IN ({marks}))",
            (bank, *chunk),
        )
    return append_events(db, events)
