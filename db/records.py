"""The ledger's rows as the layers above receive them: frozen records, their JSON columns read.

The repositories read with ``sqlite3.Row`` and return these; nothing above ``db/`` indexes a row
by a column's name (``tests/loopback/test_layers.py`` checks that no layer above calls a ``db/``
function annotated to return rows: those, like the audit chain's own check, stay inside ``db/``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from functools import cached_property
from typing import Any


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _json_strings(text: str | None) -> tuple[str, ...]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return ()
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class LedgerMemory:
    """One memory of the ledger (a row of ``memories``): a version of an item with its verdict.

    ``item_json`` is the item as delivered to the backend (``{}`` once erased), read as a dict by
    ``item`` when first asked for (a report over thousands of memories never parses them), ``tags``
    its final tags; ``replaces`` the memory an update superseded."""

    id: str
    bank: str
    status: str
    content: str
    content_hash: str
    topic: str | None = None
    stage: str | None = None
    topic_key: str | None = None
    cardinality: str | None = None
    tags: tuple[str, ...] = ()
    hit_count: int = 0
    document_id: str | None = None
    item_json: str = "{}"
    rule: str | None = None
    reason: str | None = None
    conflict_with: str | None = None
    event_time: str | None = None
    created_at: str = ""
    updated_at: str = ""
    request_id: str | None = None
    replaces: str | None = None

    @classmethod
    def of(cls, row: sqlite3.Row) -> LedgerMemory:
        """The record of a ``SELECT * FROM memories`` row (extra columns are ignored)."""
        return cls(
            id=row["id"],
            bank=row["bank"],
            status=row["status"],
            content=row["content"],
            content_hash=row["content_hash"],
            topic=row["topic"],
            stage=row["stage"],
            topic_key=row["topic_key"],
            cardinality=row["cardinality"],
            tags=_json_strings(row["tags"]),
            hit_count=row["hit_count"],
            document_id=row["document_id"],
            item_json=row["item"] or "{}",
            rule=row["rule"],
            reason=row["reason"],
            conflict_with=row["conflict_with"],
            event_time=row["event_time"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            request_id=row["request_id"],
            replaces=row["replaces"],
        )

    @cached_property
    def item(self) -> dict[str, Any]:
        """The item as delivered, a fresh dict of this record's (``{}`` for malformed JSON)."""
        return _json_object(self.item_json)


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """One audit event about a memory, as a memory's history reads it (``after``: what the event
    recorded of the memory after it, when anything)."""

    seq: int
    id: str
    ts: str
    memory_id: str
    action: str
    source: str | None
    rule: str | None
    reason: str | None
    after: dict[str, Any] | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> MemoryEvent:
        return cls(
            seq=int(row["seq"]),
            id=row["id"],
            ts=row["ts"],
            memory_id=row["memory_id"],
            action=row["action"],
            source=row["source"],
            rule=row["rule"],
            reason=row["reason"],
            after=_json_object(row["after"]) if row["after"] else None,
        )


@dataclass(frozen=True, slots=True)
class Mem0Event:
    """A Mem0 add's event, as a client polls it: per item, the ids it became and its verdict."""

    id: str
    bank: str
    kind: str
    request_id: str | None
    results: list[dict[str, Any]]
    created_at: str

    @classmethod
    def of(cls, row: sqlite3.Row) -> Mem0Event:
        try:
            results = json.loads(row["results"] or "[]")
        except ValueError:
            results = []
        return cls(
            id=row["id"],
            bank=row["bank"],
            kind=row["kind"],
            request_id=row["request_id"],
            results=[r for r in results if isinstance(r, dict)] if isinstance(results, list) else [],
            created_at=row["created_at"],
        )
