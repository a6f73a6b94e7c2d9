"""Mem0's answers, shaped from the ledger: a memory, a search hit, a history entry, an event.

How a Mem0 memory is kept (a Hindsight item, so it goes to either backend unchanged):

* the text is the item's ``content``;
* ``user_id`` / ``agent_id`` / ``app_id`` / ``run_id`` are the tags ``user:<id>`` … (exact tag
  filters select them, in the ledger and in the backend);
* Mem0's ``metadata`` (any JSON object) is one metadata entry, ``mem0_metadata``, holding its JSON
  text (a backend's metadata is string → string); ``mem0_role`` and ``mem0_name`` keep the
  message's role and name; ``mem0_id`` the Mem0 id, the same for every version of an updated memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.db.records import LedgerMemory, MemoryEvent
from memwarden.fronts.mem0.filters import ENTITY_TAG, Record
from memwarden.policies.tags import split_tag

TAG_ENTITY = {v: k for k, v in ENTITY_TAG.items()}  # user → user_id …


def entity_tags(entities: Mapping[str, str], separator: str = ":") -> list[str]:
    return [f"{ENTITY_TAG[name]}{separator}{value}" for name, value in entities.items()]


def item_of(
    text: str,
    *,
    mem0_id: str,
    entities: Mapping[str, str],
    metadata: Mapping[str, Any] | None,
    role: str | None,
    name: str | None = None,
    separator: str = ":",
) -> dict[str, Any]:
    """The Hindsight item a Mem0 memory is written as."""
    meta = {"mem0_id": mem0_id}
    if metadata is not None:
        meta["mem0_metadata"] = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    if role:
        meta["mem0_role"] = role
    if name:
        meta["mem0_name"] = name
    item: dict[str, Any] = {"content": text, "tags": entity_tags(entities, separator), "metadata": meta}
    if role:
        item["context"] = f"{role} message" + (f" from {name}" if name else "")
    return item


def _meta(item: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = item.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def mem0_id(row: LedgerMemory) -> str:
    value = _meta(row.item).get("mem0_id")
    return value if isinstance(value, str) and value else str(row.id)


def user_metadata(item: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = _meta(item).get("mem0_metadata")
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    meta = {k: v for k, v in _meta(item).items() if not str(k).startswith("mem0_")}
    return meta or None  # an item written by another front: its metadata as it is


def entities(tags: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for tag in tags:
        split = split_tag(tag)
        if split is not None and split[0] in TAG_ENTITY:
            out.setdefault(TAG_ENTITY[split[0]], split[1].strip())
    return out


def record(row: LedgerMemory) -> Record:
    """The memory as a filter reads it."""
    item = row.item
    return Record(
        id=mem0_id(row),
        text=row.content,
        entities=entities(row.tags),
        metadata=user_metadata(item) or {},
        categories=[row.topic] if row.topic else [],
        created_at=_first_created(row),
        updated_at=row.updated_at,
        timestamp=row.event_time,
    )


def _first_created(row: LedgerMemory) -> str:
    # A version's created_at is when the memory was first created (kept in the item by an update).
    created = _meta(row.item).get("mem0_created_at")
    return created if isinstance(created, str) else str(row.created_at)


def memory_json(row: LedgerMemory, *, oss: bool = False) -> dict[str, Any]:
    """A memory in Mem0's shape (the platform's; ``oss``: the open-source server's)."""
    item = row.item
    found = entities(row.tags)
    out: dict[str, Any] = {
        "id": mem0_id(row),
        "memory": row.content,
        "user_id": found.get("user_id"),
        "agent_id": found.get("agent_id"),
        "app_id": found.get("app_id"),
        "run_id": found.get("run_id"),
        "metadata": user_metadata(item),
        "categories": [row.topic] if row.topic else [],
        "created_at": _first_created(row),
        "updated_at": row.updated_at,
    }
    if oss:
        out["hash"] = row.content_hash
        role = _meta(item).get("mem0_role")
        if role:
            out["role"] = role
    else:
        out.update(expiration_date=None, immutable=False, structured_attributes=None)
    out["warden"] = {"topic": row.topic, "stage": row.stage, "status": row.status, "ledger_id": row.id}
    return out


def history_json(
    versions: Sequence[LedgerMemory], events: Sequence[MemoryEvent], *, oss: bool = False
) -> list[dict[str, Any]]:
    """The memory's account in Mem0's history shape, from its versions and their audit events:
    the first version's ``add`` an ADD, each later version's an UPDATE (old and new text), an
    archive or erasure a DELETE. Erased versions have no text left to show."""
    by_id = {v.id: v for v in versions}
    order = [v.id for v in versions]
    out: list[dict[str, Any]] = []
    for e in events:
        row = by_id.get(e.memory_id)
        if row is None:
            continue
        position = order.index(row.id)
        text = row.content or None
        kind: str | None = None
        old = new = None
        if e.action in ("add", "redact"):
            kind = "ADD" if position == 0 else "UPDATE"
            new = text
            old = (versions[position - 1].content or None) if position else None
        elif e.action in ("archive", "expire", "erase") or (e.action == "supersede" and e.rule != "update"):
            kind, old = "DELETE", text
        elif e.action == "restore":
            kind, new = "ADD", text
        if kind is None:
            continue
        found = entities(row.tags)
        entry: dict[str, Any] = {
            "id": e.id,
            "memory_id": mem0_id(row),
            "old_memory": old,
            "new_memory": new,
            "event": kind,
            "created_at": e.ts,
            "updated_at": e.ts,
        }
        if oss:
            entry.update(is_deleted=kind == "DELETE", actor_id=None, role=_meta(row.item).get("mem0_role"))
        else:
            entry.update(
                input=[],
                user_id=found.get("user_id"),
                agent_id=found.get("agent_id"),
                app_id=found.get("app_id"),
                run_id=found.get("run_id"),
                categories=[row.topic] if row.topic else [],
                metadata=user_metadata(row.item),
            )
        out.append(entry)
    return out
