"""The outbox's entries as governance reads and settles them: a parcel to deliver, whether a
status may be tried again, the transaction that settles a delivery, the audit events about an
entry. :mod:`memwarden.governance.outbox` (the worker) and :mod:`memwarden.governance.recovery`
(at start) share them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime

from memwarden.backends.types import Item
from memwarden.db import outbox as rows
from memwarden.db.audit import AuditEvent
from memwarden.db.common import Connection
from memwarden.db.deliveries import mark_delivered
from memwarden.db.memories import Change, move
from memwarden.governance.errors import QueueFull

TRANSIENT_STATUS = frozenset({408, 429})  # with every 5xx: the backend may take it later
# Server errors that say "not now" (a gateway, an unavailable or overloaded server): retried until the
# limits. Any other 5xx answered outbox.max_errors times in a row makes the entry a dead letter.
UNAVAILABLE_STATUS = frozenset({502, 503, 504, 408, 429})


def transient(status: int) -> bool:
    return status >= 500 or status in TRANSIENT_STATUS


class OutboxFull(QueueFull):
    """The queue is past a limit: a governed write is refused (503) before anything is recorded."""


class Corrupt(Exception):
    """An outbox row that cannot be read (its JSON damaged)."""


@dataclass(frozen=True)
class Parcel:
    """An entry read for delivery."""

    entry: rows.Entry
    items: list[Item]
    document_tags: tuple[str, ...]
    memory_ids: list[str]
    supersede: list[tuple[str, str]]


def parcel(entry: rows.Entry) -> Parcel:
    try:
        body = json.loads(entry.body or "")
        items = [Item.from_json(i) for i in body["items"]]
        tags = tuple(str(t) for t in body.get("document_tags") or ())
        memory_ids = [str(m) for m in json.loads(entry.memory_ids)]
        supersede = [(str(a), str(b)) for a, b in json.loads(entry.supersede)]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise Corrupt(f"corrupt outbox row {entry.seq}: {type(exc).__name__}: {exc}") from None
    return Parcel(entry, items, tags, memory_ids, supersede)


@dataclass(frozen=True)
class Summary:
    """The outbox as health, the admin API and the metrics show it."""

    queued_entries: int
    queued_items: int
    oldest_age_s: float | None
    dead_letters: int
    dead_items: int
    given_up: int
    delivered_kept: int
    max_items: int
    max_age_s: float
    full: str | None  # why governed writes answer 503, while they do

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def epoch(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


def memory_ids_of(entry: rows.Entry) -> list[str]:
    try:
        return [str(m) for m in json.loads(entry.memory_ids)]
    except ValueError:
        return []


def settle_delivered(
    db: Connection, got: Parcel, change: Change, keep: bool, backend_operation_id: str | None = None
) -> bool:
    """The backend has the entry's items, in one transaction: the entry delivered (kept or
    deleted), its memories ``active`` (``change`` says how, audited), supersedes applied, earlier
    failed rows of the same content resolved. False when the entry had moved on meanwhile."""
    entry = got.entry
    settled = rows.delivered(db, entry.seq, keep=keep, backend_operation_id=backend_operation_id)
    move(db, entry.bank, got.memory_ids, change)
    mark_delivered(
        db,
        bank=entry.bank,
        memory_ids=got.memory_ids,
        supersede=got.supersede,
        request_id=entry.request_id,
        actor=entry.actor,
    )
    return settled


def queue_event(entry: rows.Entry, reason: str) -> AuditEvent:
    """The audit event of a write queued for the worker (its client was answered: accepted)."""
    return entry_event(entry, "outbox_queue", entry.actor, reason, state="queued")


def entry_event(
    entry: rows.Entry, action: str, actor: str, reason: str, request_id: str | None = None, *, state: str
) -> AuditEvent:
    """An audit event about an outbox entry; ``state`` is the one it is left in."""
    return AuditEvent(
        action=action,
        bank=entry.bank,
        actor=actor,
        source="outbox",
        reason=reason,
        after={"operation_id": entry.operation_id, "items": entry.items, "state": state},
        request_id=request_id or entry.request_id,
    )
