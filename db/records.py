"""The ledger's rows as the layers above receive them: frozen records, their JSON columns read.

The repositories read with ``sqlite3.Row`` and return these; nothing above ``db/`` indexes a row
by a column's name (``tests/loopback/test_layers.py`` checks that no layer above calls a ``db/``
function annotated to return rows: those, like the audit chain's own check, stay inside ``db/``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, NamedTuple


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


class LedgerMemory(NamedTuple):
    """One memory of the ledger (a row of ``memories``): a version of an item with its verdict.

    ``tags`` are its final tags; ``item_json`` the item as delivered to the backend (``{}`` once
    erased), which ``item`` reads; ``replaces`` the memory an update superseded. A named tuple,
    built from the row's values in order: a report reads every active memory of a bank."""

    id: str
    bank: str
    status: str
    content: str
    content_hash: str
    topic: str | None
    stage: str | None
    topic_key: str | None
    cardinality: str | None
    tags: tuple[str, ...]
    hit_count: int
    document_id: str | None
    item_json: str
    rule: str | None
    reason: str | None
    conflict_with: str | None
    event_time: str | None
    created_at: str
    updated_at: str
    request_id: str | None
    replaces: str | None
    writer: str | None = None  # the API key's id ("anonymous" without keys); None: written before 0021
    writer_scope: str | None = None  # that key's scopes when it wrote (JSON)
    channel: str | None = None  # hindsight, mem0, mcp …

    @property
    def item(self) -> dict[str, Any]:
        """The item as delivered: a fresh dict at each call (``{}`` for malformed JSON)."""
        return _json_object(self.item_json)

    @classmethod
    def of(cls, row: sqlite3.Row) -> LedgerMemory:
        """The record of a row selected with :data:`MEMORY_RECORD` (its first columns, in order)."""
        v = tuple(row)
        return cls._make((*v[:9], _json_strings(v[9]), v[10], v[11], v[12] or "{}", *v[13:24]))


# The columns a LedgerMemory is read from, in its fields' order: ``SELECT {MEMORY_RECORD} FROM memories``.
MEMORY_RECORD = ", ".join(LedgerMemory._fields).replace("item_json", "item")


@dataclass(frozen=True)
class Provenance:
    """Who wrote a memory, as memwarden saw it — never what the caller says of itself: the API key's
    id (``anonymous`` without keys) and its scopes at the time (JSON; None without a key), and the
    channel it came through (``hindsight``, ``mem0``, ``mcp``)."""

    writer: str
    scope: str | None
    channel: str

    def as_json(self) -> dict[str, Any]:
        scope = json.loads(self.scope) if self.scope else None
        return {"writer": self.writer, "writer_scope": scope, "channel": self.channel}


class MemoryBrief(NamedTuple):
    """What a report reads of each memory of a bank: its text, labels, tags and document — not the
    item as delivered nor the bookkeeping (a report reads every active memory; the fewer columns,
    the sooner it answers)."""

    id: str
    content: str
    content_hash: str
    topic: str | None
    stage: str | None
    topic_key: str | None
    tags: tuple[str, ...]
    document_id: str | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> MemoryBrief:
        """The record of a row selected with :data:`BRIEF_RECORD`."""
        v = tuple(row)
        return cls._make((*v[:6], _json_strings(v[6]), v[7]))


BRIEF_RECORD = ", ".join(MemoryBrief._fields)


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
