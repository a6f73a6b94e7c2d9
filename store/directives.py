"""Directives: a bank's hard rules for reflect, as Hindsight 1.1.0 keeps and applies them.

A directive has a name, its text, a priority (higher first), an active flag and tags. Which apply
to a reflect (:func:`in_force`): every active untagged one; a tagged one only when the reflect
names a tag filter (``tags`` or ``tag_groups``) that its tags satisfy — and with no filter, none
of the tagged ones (Hindsight's "isolation"). ``apply_all_directives`` applies every active one.
Listing (:func:`list_page`) is looser, as Hindsight's: no filter lists them all.

Creating, changing and deleting one is audited (``directive_create`` …) in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.policies import tagfilter
from memwarden.store.banks import ensure_bank, require_bank
from memwarden.store.errors import StoreError
from memwarden.store.shapes import loads

ORDER = "ORDER BY priority DESC, created_at DESC, id DESC"
FIELDS = ("name", "content", "priority", "is_active", "tags")


def shape(row: sqlite3.Row) -> dict[str, Any]:
    """Hindsight's ``DirectiveResponse``."""
    return {
        "id": row["id"],
        "bank_id": row["bank_id"],
        "name": row["name"],
        "content": row["content"],
        "priority": row["priority"],
        "is_active": bool(row["is_active"]),
        "tags": loads(row["tags"], []),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def not_found(directive_id: str) -> StoreError:
    return StoreError(404, f"Directive '{directive_id}' not found")


def _row(db: sqlite3.Connection, bank: str, directive_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM store_directives WHERE bank_id = ? AND id = ?", (bank, directive_id)
    ).fetchone()
    if row is None:  # an id that is no UUID too (Hindsight's database fails on it: a 500)
        raise not_found(directive_id)
    return row


def _audit(db: sqlite3.Connection, action: str, bank: str, before: Any, after: Any) -> None:
    append_events(db, [AuditEvent(action=action, bank=bank, source="store", before=before, after=after)])


async def create(ledger: Database, bank: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A new directive (the bank made on first use, as a write makes it)."""
    directive_id = str(uuid.uuid4())

    def write(db: sqlite3.Connection) -> dict[str, Any]:
        ts = now()
        ensure_bank(db, bank, ts)
        db.execute(
            "INSERT INTO store_directives (id, bank_id, name, content, priority, is_active, tags, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                directive_id,
                bank,
                fields["name"],
                fields["content"],
                fields.get("priority", 0),
                int(fields.get("is_active", True)),
                json.dumps(list(fields.get("tags") or []), ensure_ascii=False),
                ts,
                ts,
            ),
        )
        made = shape(_row(db, bank, directive_id))
        _audit(db, "directive_create", bank, None, made)
        return made

    made: dict[str, Any] = await ledger.write(write)
    return made


async def get(ledger: Database, bank: str, directive_id: str) -> dict[str, Any]:
    found: dict[str, Any] = await ledger.read(lambda db: shape(_row(db, bank, directive_id)))
    return found


async def update(ledger: Database, bank: str, directive_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
    """``PATCH``: the fields given (not null) replace the directive's (none: it is answered as is)."""
    edits = {k: v for k, v in changes.items() if k in FIELDS and v is not None}

    def write(db: sqlite3.Connection) -> dict[str, Any]:
        before = shape(_row(db, bank, directive_id))
        if not edits:
            return before
        values = {
            k: json.dumps(list(v), ensure_ascii=False) if k == "tags" else int(v) if k == "is_active" else v
            for k, v in edits.items()
        }
        sets = ", ".join(f"{k} = ?" for k in values)
        db.execute(
            f"UPDATE store_directives SET {sets}, updated_at = ? WHERE bank_id = ? AND id = ?",  # noqa: S608
            (*values.values(), now(), bank, directive_id),
        )
        after = shape(_row(db, bank, directive_id))
        _audit(db, "directive_update", bank, before, after)
        return after

    updated: dict[str, Any] = await ledger.write(write)
    return updated


async def delete(ledger: Database, bank: str, directive_id: str) -> dict[str, Any]:
    def write(db: sqlite3.Connection) -> None:
        before = shape(_row(db, bank, directive_id))
        db.execute("DELETE FROM store_directives WHERE bank_id = ? AND id = ?", (bank, directive_id))
        _audit(db, "directive_delete", bank, before, None)

    await ledger.write(write)
    return {"status": "deleted"}


def _all(db: sqlite3.Connection, bank: str, active_only: bool) -> list[dict[str, Any]]:
    where = "bank_id = ?" + (" AND is_active = 1" if active_only else "")
    return [shape(r) for r in db.execute(f"SELECT * FROM store_directives WHERE {where} {ORDER}", (bank,))]  # noqa: S608


async def list_page(
    ledger: Database,
    bank: str,
    *,
    tags: Sequence[str],
    tags_match: str,
    active_only: bool,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """``GET …/directives``: untagged directives always, tagged ones matching ``tags`` (all of them
    without ``tags``), by priority, newest first."""
    await require_bank(ledger, bank)
    rows: list[dict[str, Any]] = await ledger.read(lambda db: _all(db, bank, active_only))
    predicate = tagfilter.leaf(tags, tags_match) if tags else None
    if predicate is not None:
        rows = [d for d in rows if not d["tags"] or predicate(frozenset(d["tags"]))]
    return {"items": rows[offset : offset + limit], "total": len(rows), "limit": limit, "offset": offset}


def in_force(
    directives: Sequence[dict[str, Any]],
    *,
    tags: Sequence[str] | None,
    tags_match: str,
    tag_groups: Sequence[Any] | None,
    apply_all: bool,
) -> list[dict[str, Any]]:
    """The active ``directives`` a reflect with these filters applies, in their order."""
    active = [d for d in directives if d["is_active"]]
    if apply_all:
        return active
    # As Hindsight's SQL: the flat filter counts only when it names tags (an empty ``exact`` is no filter).
    predicate = tagfilter.build(tags, tags_match, tag_groups) if tags else tagfilter.build(None, "any", tag_groups)
    return [d for d in active if not d["tags"] or (predicate is not None and predicate(frozenset(d["tags"])))]


async def for_reflect(
    ledger: Database,
    bank: str,
    *,
    tags: Sequence[str] | None,
    tags_match: str,
    tag_groups: Sequence[Any] | None,
    apply_all: bool,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await ledger.read(lambda db: _all(db, bank, True))
    return in_force(rows, tags=tags, tags_match=tags_match, tag_groups=tag_groups, apply_all=apply_all)
