"""The audit log: append-only, hash-chained events.

Each event's hash covers its fields and the previous event's hash, so an edited or deleted event
is detected by :func:`verify_chain`. The chain is **keyed**: each hash is an HMAC-SHA256 with the
audit key (derived from the installation's key), so an edit with recomputed hashes needs the key;
events written before the chain was keyed (a ledger from an older memwarden) keep their plain
SHA-256 hashes, up to ``keyed_from`` (kept in ``audit_meta``, and in every checkpoint,
``db/checkpoints.py``: moving it is caught). The connection that appends carries the key
(:class:`LedgerConnection`). Events are appended inside the caller's transaction
(:func:`append_events`); the database mirrors and publishes them after the commit
(:meth:`memwarden.db.database.Database.write`), collected per writer thread by :func:`collecting`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from memwarden.db.common import now

# Who is acting: the API key a request authenticated with (its id), set by the front for the
# request's task; "anonymous" where no key is required. Writes run on the ledger's writer thread in
# a copy of the caller's context (:meth:`memwarden.db.database.Database.write`), so an event made
# there names the caller's actor too.
ACTOR: contextvars.ContextVar[str] = contextvars.ContextVar("memwarden_actor", default="anonymous")


def current_actor() -> str:
    return ACTOR.get()


GENESIS = "0" * 64
AUDIT_KEY_LABEL = b"memwarden/audit-chain/v1"
TRIGGERS = {
    "audit_no_update": "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_events"
    " BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END",
    "audit_no_delete": "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_events"
    " BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END",
}


def audit_key(installation_key: bytes) -> bytes:
    """The key of the chain and its checkpoints, derived from the installation's key."""
    return hmac.new(installation_key, AUDIT_KEY_LABEL, hashlib.sha256).digest()


class LedgerConnection(sqlite3.Connection):
    """A connection to the ledger that knows the chain's key: events it appends from
    ``keyed_from`` on are keyed."""

    audit_key: bytes | None = None
    keyed_from: int = 1


EVENT_FIELDS = (
    "id",
    "ts",
    "bank",
    "memory_id",
    "action",
    "actor",
    "source",
    "rule",
    "reason",
    "before",
    "after",
    "request_id",
)


@dataclass
class AuditEvent:
    """One entry of the audit log. ``before``/``after`` are JSON-able snapshots (never secrets)."""

    action: str
    bank: str | None = None
    memory_id: str | None = None
    actor: str = field(default_factory=current_actor)
    source: str = "api"
    rule: str | None = None
    reason: str | None = None
    before: Any = None
    after: Any = None
    request_id: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    ts: str = field(default_factory=now)
    seq: int | None = None
    prev_hash: str | None = None
    hash: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A shallow dict: ``dataclasses.asdict`` deep-copied ``before``/``after``, which made 100
        events cost 24–30 ms in the ledger's one writer instead of ~7."""
        return {f: getattr(self, f) for f in _EVENT_ATTRS}


_EVENT_ATTRS = tuple(f.name for f in fields(AuditEvent))


def event_hash(seq: int, event: dict[str, Any], prev_hash: str, key: bytes | None = None) -> str:
    """The event's hash: HMAC-SHA256 with ``key``; plain SHA-256 without (the unkeyed chain of older
    ledgers)."""
    payload = [seq, *(event.get(f) for f in EVENT_FIELDS), prev_hash]
    data = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str).encode()
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


# Events appended by the transaction running on this thread, for mirroring after its commit.
_appended = threading.local()


@contextlib.contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Collect, as dicts, the events :func:`append_events` appends on this thread meanwhile."""
    events: list[dict[str, Any]] = []
    _appended.events = events
    try:
        yield events
    finally:
        _appended.events = None


def append_events(db: sqlite3.Connection, events: Iterable[AuditEvent | None]) -> list[AuditEvent]:
    """Append ``events`` to the chain inside the caller's transaction; fills seq/prev_hash/hash.
    None entries (a :func:`memwarden.db.memories.transition` that changed nothing) are skipped."""
    last = db.execute("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").fetchone()
    seq, prev = (last[0], last[1]) if last else (0, GENESIS)
    chain_key: bytes | None = getattr(db, "audit_key", None)
    keyed_from: int = getattr(db, "keyed_from", 1)
    out = []
    pending: list[dict[str, Any]] | None = getattr(_appended, "events", None)
    for event in events:
        if event is None:
            continue
        seq += 1
        row = event.as_dict()
        for key in ("before", "after"):
            if row[key] is not None:
                row[key] = json.dumps(row[key], ensure_ascii=False, sort_keys=True)
        digest = event_hash(seq, row, prev, chain_key if seq >= keyed_from else None)
        db.execute(
            "INSERT INTO audit_events (seq, id, ts, bank, memory_id, action, actor, source, rule, reason, before,"
            " after, request_id, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (seq, *(row[f] for f in EVENT_FIELDS), prev, digest),
        )
        event.seq, event.prev_hash, event.hash = seq, prev, digest
        prev = digest
        out.append(event)
        if pending is not None:
            pending.append(event.as_dict())
    return out


def event_from_row(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    for key in ("before", "after"):
        if out.get(key) is not None:
            out[key] = json.loads(out[key])
    return out


@dataclass(frozen=True)
class EventFilter:
    """A ``WHERE`` clause over ``audit_events`` and its parameters; build one with :func:`event_filter`."""

    where: str
    params: tuple[Any, ...]


def event_filter(
    *,
    bank: str | None = None,
    actions: Sequence[str] | None = None,
    after_seq: int | None = None,
    since_ts: str | None = None,
) -> EventFilter:
    """Events of ``bank``, with one of ``actions`` (an empty list matches none), after sequence
    number ``after_seq`` or at or after the ISO timestamp ``since_ts``."""
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if bank:
        where.append("bank = ?")
        params.append(bank)
    if actions is not None:
        where.append(f"action IN ({','.join('?' * len(actions))})")
        params.extend(actions)
    if after_seq is not None:
        where.append("seq > ?")
        params.append(after_seq)
    elif since_ts is not None:
        where.append("ts >= ?")
        params.append(since_ts)
    return EventFilter(" AND ".join(where), tuple(params))


def fetch_events(db: sqlite3.Connection, where: EventFilter, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` events matching ``where``, in order."""
    rows = db.execute(f"SELECT * FROM audit_events WHERE {where.where} ORDER BY seq LIMIT ?", (*where.params, limit))  # noqa: S608
    return [event_from_row(r) for r in rows]


def events_after(db: sqlite3.Connection, where: EventFilter, after: int, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` events matching ``where`` after sequence number ``after`` (a page of a backlog)."""
    return fetch_events(db, EventFilter(f"({where.where}) AND seq > ?", (*where.params, after)), limit)


def latest_events(db: sqlite3.Connection, where: EventFilter, count: int) -> list[dict[str, Any]]:
    """The last ``count`` events matching ``where``, in order."""
    rows = db.execute(
        f"SELECT * FROM audit_events WHERE {where.where} ORDER BY seq DESC LIMIT ?",  # noqa: S608
        (*where.params, count),
    ).fetchall()
    return [event_from_row(r) for r in reversed(rows)]


def last_seq(db: sqlite3.Connection) -> int:
    """The sequence number of the newest event (0: none yet)."""
    seq: int = db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit_events").fetchone()[0]
    return seq


def all_event_rows(db: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every event, in order, as stored (for :func:`verify_chain`)."""
    return db.execute("SELECT * FROM audit_events ORDER BY seq").fetchall()


@dataclass(frozen=True)
class ChainProblem:
    seq: int
    problem: str


def verify_chain(
    rows: Iterable[sqlite3.Row | dict[str, Any]],
    *,
    key: bytes | None = None,
    keyed_from: int | None = None,
    start: tuple[int, str] = (1, GENESIS),
) -> list[ChainProblem]:
    """Check seq continuity, prev_hash links and every hash (keyed with ``key`` from ``keyed_from``
    on); list what is wrong (empty: intact). ``start``: the first event's seq and previous hash (a
    check of the chain's tail from a checkpoint on)."""
    keyed_from = keyed_from if keyed_from is not None and key is not None else 2**62
    problems = []
    expected_seq, prev = start
    for raw in rows:
        row = dict(raw)
        seq = int(row["seq"])
        if seq != expected_seq:
            missing = f"{expected_seq}" if seq == expected_seq + 1 else f"{expected_seq}-{seq - 1}"
            problems.append(ChainProblem(expected_seq, f"event(s) {missing} deleted"))
        if row["prev_hash"] != prev:
            problems.append(ChainProblem(seq, "chain broken: prev_hash does not match the previous event"))
        if event_hash(seq, row, row["prev_hash"], key if seq >= keyed_from else None) != row["hash"]:
            problems.append(ChainProblem(seq, "event edited: its hash does not match its content"))
        expected_seq, prev = seq + 1, row["hash"]
    return problems


def unacknowledged_alarms(db: sqlite3.Connection) -> list[tuple[int, str]]:
    """The ``audit_tamper`` events no operator has acknowledged since (``audit_acknowledged``): an
    alarm stays until someone says they looked — a start that finds the chain consistent again
    (the tail and its newest checkpoint deleted, then a checkpoint written over them) does not
    forget it. ``(seq, reason)``, oldest first."""
    rows = db.execute(
        "SELECT seq, reason FROM audit_events WHERE action = 'audit_tamper' AND seq > ? ORDER BY seq",
        (last_acknowledged(db),),
    ).fetchall()
    return [(int(r[0]), str(r[1] or "")) for r in rows]


def acknowledgement(reason: str) -> AuditEvent:
    """The event that ends the alarms before it (:func:`unacknowledged_alarms`); its actor the caller's."""
    return AuditEvent("audit_acknowledged", source="audit", reason=reason[:2000])


def last_acknowledged(db: sqlite3.Connection) -> int:
    """The seq of the newest ``audit_acknowledged`` event (0: none)."""
    row = db.execute("SELECT MAX(seq) FROM audit_events WHERE action = 'audit_acknowledged'").fetchone()
    return int(row[0] or 0)
