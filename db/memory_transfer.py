"""The ledger's rows of a bank as a transfer archive carries them, and their restoring on import.

An export reads every row of the bank (:func:`rows_for_export`), whatever its status: the held,
superseded and failed ones too, so that a bank moved elsewhere and back keeps its governance.
An import writes them back (:func:`restore_rows`) inside the import's one transaction, each with
an ``import`` event; a row whose id the ledger already holds (the same archive imported twice,
or into another bank of the same memwarden) gets a new id, and the references to it among the
imported rows follow.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import chunked
from memwarden.db.memories import Change, move

# The columns of ``memories`` an archive carries (all but the bank, which is the archive's).
LEDGER_FIELDS = (
    "id",
    "status",
    "content",
    "content_hash",
    "topic",
    "stage",
    "topic_key",
    "cardinality",
    "tags",
    "hit_count",
    "document_id",
    "item",
    "rule",
    "reason",
    "conflict_with",
    "event_time",
    "created_at",
    "updated_at",
    "request_id",
)
JSON_FIELDS = ("tags",)  # decoded; ``item`` (the item as forwarded) travels as the JSON text it is stored as
_COLUMNS = ", ".join(LEDGER_FIELDS)


def rows_for_export(db: sqlite3.Connection, bank: str) -> list[dict[str, Any]]:
    """Every ledger row of ``bank``, oldest first, its tags decoded."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM memories WHERE bank = ? ORDER BY created_at, id",  # noqa: S608
        (bank,),
    ).fetchall()
    out = []
    for row in rows:
        record = dict(row)
        for key in JSON_FIELDS:
            record[key] = json.loads(record[key])
        out.append(record)
    return out


def taken_ids(db: sqlite3.Connection, ids: Sequence[str], *, bank: str | None = None) -> set[str]:
    """Which of ``ids`` the ledger already holds (in ``bank``; in any bank when None)."""
    found: set[str] = set()
    where, args = ("bank = ? AND ", [bank]) if bank is not None else ("", [])
    for chunk in chunked(sorted(set(ids))):
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in db.execute(f"SELECT id FROM memories WHERE {where}id IN ({marks})", (*args, *chunk))  # noqa: S608
        )
    return found


def restore_rows(
    db: sqlite3.Connection,
    bank: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    operation_id: str,
    source_bank: str,
) -> dict[str, str]:
    """Insert ``rows`` (as :func:`rows_for_export` gave them, validated by the caller) into
    ``bank``, each with its ``import`` event, inside the caller's transaction. Returns the ids
    that changed (old → new)."""
    renamed = {old: uuid.uuid4().hex for old in taken_ids(db, [r["id"] for r in rows])}
    events = []
    for row in rows:
        record = {key: row.get(key) for key in LEDGER_FIELDS}
        record["id"] = renamed.get(row["id"], row["id"])
        conflict = record["conflict_with"]
        if conflict is not None and conflict in renamed:
            record["conflict_with"] = renamed[conflict]
        for key in JSON_FIELDS:
            record[key] = json.dumps(record[key], ensure_ascii=False)
        marks = ",".join("?" * (len(LEDGER_FIELDS) + 1))
        db.execute(
            f"INSERT INTO memories (bank, {_COLUMNS}) VALUES ({marks})",  # noqa: S608
            (bank, *(record[key] for key in LEDGER_FIELDS)),
        )
        after: dict[str, Any] = {
            "status": record["status"],
            "content_hash": record["content_hash"],
            "topic": record["topic"],
            "stage": record["stage"],
            "document_id": record["document_id"],
            "from_bank": source_bank,
            "operation_id": operation_id,
        }
        if record["id"] != row["id"]:
            after["was"] = row["id"]
        events.append(AuditEvent(action="import", bank=bank, memory_id=record["id"], source="transfer", after=after))
    append_events(db, events)
    return renamed


def retire_document_rows(
    db: sqlite3.Connection, bank: str, document_ids: Iterable[str], *, operation_id: str, keep: Set[str] = frozenset()
) -> list[AuditEvent]:
    """An import replaced these documents: the rows that held them (``active``, ``pending``) are
    ``superseded``, each with its event — but those of ``keep`` (the archive's own rows, imported
    again)."""
    ids: list[str] = []
    for chunk in chunked(sorted(set(document_ids))):
        marks = ",".join("?" * len(chunk))
        ids += [
            r[0]
            for r in db.execute(
                f"SELECT id FROM memories WHERE bank = ? AND status IN ('active', 'pending')"  # noqa: S608
                f" AND document_id IN ({marks})",
                (bank, *chunk),
            )
            if r[0] not in keep
        ]
    reason = f"its document was replaced by an import (operation {operation_id})"
    events: list[AuditEvent] = []
    for frm in ("active", "pending"):
        change = Change(frm, "superseded", "supersede", "transfer", None, reason=reason)
        events += move(db, bank, ids, change)
    return events
