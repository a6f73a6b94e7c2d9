"""The ``outbox`` table: governed writes accepted for a backend, until the backend has them.

Every enforced retain in front of a backend records its delivery here in the transaction that
records its verdicts. States: ``sending`` (the request delivers it itself), ``queued`` (to deliver,
in ``seq`` order per bank), ``delivered`` (kept a while without its body, so that its operation id
still answers), ``dead`` (the backend
refused it with a 4xx, or the row could not be read: its answer kept, its memories ``failed``),
``given_up`` (an operator gave up on it: its memories ``failed``). A delivery answered at once
(the synchronous path) deletes its entry in the transaction that marks its memories delivered.

Several instances on one database: ``owner`` is the instance (``db/instances.py``) whose request
is delivering a ``sending`` entry, or whose worker has claimed a bank's first ``queued`` one
(:func:`claim_first`). A claim lasts as long as its owner is alive (``db/instances.py``: its lock
held); a dead owner's entries are
taken over (:func:`take_over`): ``sending`` ones queued again, claims let go. Claims are made
inside the one write lock every instance shares (``db/postgres.py``), so no two instances hold
the same entry, and only a bank's first queued entry is ever claimed: in order per bank.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from memwarden.db.common import now
from memwarden.db.instances import live_ids

STATES = ("sending", "queued", "delivered", "dead", "given_up")
ANSWER_CHARS = 4000  # of a refusal's body kept with a dead letter


@dataclass(frozen=True)
class Entry:
    """One outbox row. ``body`` and ``memory_ids`` are the stored JSON text: a row that does not
    parse is reported and skipped by the worker, not a crash (see ``governance.outbox``)."""

    seq: int
    operation_id: str
    bank: str
    state: str
    body: str | None
    memory_ids: str
    supersede: str
    items: int
    request_id: str | None
    actor: str
    attempts: int
    last_error: str | None
    answer: str | None
    backend_operation_id: str | None
    created_at: str
    updated_at: str
    settled_at: str | None
    queued_at: str | None = None
    owner: str | None = None
    attempt_by: str | None = None  # the instance whose worker is delivering it right now (PostgreSQL)

    def public(self) -> dict[str, Any]:
        """The entry as the admin API shows it (the body summarised: how many items, which documents)."""
        out: dict[str, Any] = {
            "operation_id": self.operation_id,
            "bank": self.bank,
            "state": self.state,
            "items": self.items,
            "attempts": self.attempts,
            "last_error": self.last_error,
            "answer": self.answer,
            "backend_operation_id": self.backend_operation_id,
            "request_id": self.request_id,
            "actor": self.actor,
            "created_at": self.created_at,
            "queued_at": self.queued_at,
            "updated_at": self.updated_at,
            "settled_at": self.settled_at,
        }
        try:
            out["memory_ids"] = json.loads(self.memory_ids)
            body = json.loads(self.body) if self.body else None
            out["document_ids"] = [i.get("document_id") for i in body["items"]] if body else None
        except (ValueError, TypeError, KeyError, AttributeError):
            out["corrupt"] = True
        return out


def _entry(row: sqlite3.Row) -> Entry:
    return Entry(**{k: row[k] for k in row.keys()})  # noqa: SIM118 - sqlite3.Row is not a mapping


def enqueue(
    db: sqlite3.Connection,
    *,
    bank: str,
    body: Mapping[str, Any],
    memory_ids: Sequence[str],
    supersede: Sequence[tuple[str, str]],
    request_id: str | None,
    actor: str,
    state: str = "sending",
    owner: str | None = None,
) -> Entry:
    """Record one delivery (``body``: the request the backend is to get), ``sending`` (the request
    of instance ``owner`` delivers it) or ``queued`` (a worker will)."""
    ts = now()
    operation_id = str(uuid.uuid4())
    items = len(body.get("items") or ())
    db.execute(
        "INSERT INTO outbox (operation_id, bank, state, body, memory_ids, supersede, items, request_id, actor,"
        " created_at, updated_at, queued_at, owner) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            operation_id,
            bank,
            state,
            json.dumps(body, ensure_ascii=False),
            json.dumps(list(memory_ids)),
            json.dumps([list(pair) for pair in supersede]),
            items,
            request_id,
            actor,
            ts,
            ts,
            ts if state == "queued" else None,
            owner if state == "sending" else None,
        ),
    )
    found = find(db, operation_id)
    assert found is not None
    return found


def find(db: sqlite3.Connection, operation_id: str) -> Entry | None:
    row = db.execute("SELECT * FROM outbox WHERE operation_id = ?", (operation_id,)).fetchone()
    return _entry(row) if row is not None else None


def has_queued(db: sqlite3.Connection, bank: str) -> bool:
    """Whether entries of ``bank`` wait for the backend (a new write goes behind them)."""
    found = db.execute("SELECT 1 FROM outbox WHERE state = 'queued' AND bank = ? LIMIT 1", (bank,)).fetchone()
    return found is not None


def attempting(db: sqlite3.Connection, seq: int, instance: str | None) -> bool:
    """The worker of ``instance`` begins an attempt at a queued entry (None: its attempt ended).
    False when the entry is no longer queued (given up or retried meanwhile: not to be attempted)."""
    if instance is None:
        db.execute("UPDATE outbox SET attempt_by = NULL WHERE seq = ?", (seq,))
        return True
    return (
        db.execute("UPDATE outbox SET attempt_by = ? WHERE seq = ? AND state = 'queued'", (instance, seq)).rowcount == 1
    )


def attempted_elsewhere(db: sqlite3.Connection, seq: int, instance: str) -> str | None:
    """The live instance, other than ``instance``, whose worker is delivering the entry right now."""
    row = db.execute(
        "SELECT attempt_by FROM outbox WHERE seq = ? AND state = 'queued' AND attempt_by != ?"  # noqa: S608
        f" AND attempt_by IN ({live_ids(db)})",
        (seq, instance),
    ).fetchone()
    return str(row[0]) if row is not None else None


WAIT: Final = "wait"  # claim_first: a live request still delivers an earlier entry of the bank


def claim_first(db: sqlite3.Connection, bank: str, owner: str) -> Entry | Literal["wait"] | None:
    """The bank's first queued entry, claimed by ``owner`` — unless another live instance holds a
    claim in the bank's queue (None: that one delivers the bank, one entry after the other), or a
    live request still delivers an earlier entry of the bank itself (:data:`WAIT`: settled either
    way, it wakes the worker; one that never settles is the worker's after a while,
    :func:`unsettled`). Call inside a write transaction."""
    row = db.execute(
        "SELECT * FROM outbox WHERE state = 'queued' AND bank = ? ORDER BY seq LIMIT 1", (bank,)
    ).fetchone()
    if row is None:
        return None
    earlier = db.execute(
        "SELECT 1 FROM outbox WHERE state = 'sending' AND bank = ? AND seq < ?"  # noqa: S608
        f" AND owner IN ({live_ids(db)}) LIMIT 1",
        (bank, row["seq"]),
    ).fetchone()
    if earlier is not None:
        return WAIT
    held = db.execute(
        "SELECT 1 FROM outbox WHERE state = 'queued' AND bank = ? AND owner IS NOT NULL AND owner != ?"  # noqa: S608
        f" AND owner IN ({live_ids(db)}) LIMIT 1",
        (bank, owner),
    ).fetchone()
    if held is not None:
        return None
    entry = _entry(row)
    if entry.owner != owner:
        db.execute("UPDATE outbox SET owner = ? WHERE seq = ?", (owner, entry.seq))
    return Entry(**{**entry.__dict__, "owner": owner})


def unsettled(db: sqlite3.Connection, bank: str, before: str) -> list[Entry]:
    """The bank's entries a request began to deliver itself before ``before`` and never settled (its
    process is alive: a failed ledger write after the backend's answer, say). Call inside a write
    transaction; :func:`hand_over` queues each."""
    return [
        _entry(r)
        for r in db.execute(
            "SELECT * FROM outbox WHERE state = 'sending' AND bank = ? AND updated_at < ? ORDER BY seq", (bank, before)
        )
    ]


def take_over(db: sqlite3.Connection) -> tuple[list[Entry], list[str]]:
    """What dead instances held: their ``sending`` entries (queued again: returned, to be audited)
    and their claims (let go). Returns those entries and the banks with unclaimed queued entries.
    Call inside a write transaction."""
    orphaned = [
        _entry(r)
        for r in db.execute(
            f"SELECT * FROM outbox WHERE state = 'sending' AND owner IS NOT NULL AND owner NOT IN ({live_ids(db)})"  # noqa: S608
            " ORDER BY seq"
        )
    ]
    ts = now()
    for entry in orphaned:
        db.execute(
            "UPDATE outbox SET state = 'queued', owner = NULL, updated_at = ?, queued_at = ? WHERE seq = ?",
            (ts, ts, entry.seq),
        )
    db.execute(
        f"UPDATE outbox SET owner = NULL WHERE state = 'queued' AND owner IS NOT NULL AND owner NOT IN ({live_ids(db)})"  # noqa: S608
    )
    banks = [r[0] for r in db.execute("SELECT DISTINCT bank FROM outbox WHERE state = 'queued' AND owner IS NULL")]
    return orphaned, banks


def queued(db: sqlite3.Connection) -> list[tuple[int, str, int, str]]:
    """Every queued entry's (seq, bank, items, when it was queued), the longest waiting first."""
    return [
        (r["seq"], r["bank"], r["items"], r["since"])
        for r in db.execute(
            "SELECT seq, bank, items, COALESCE(queued_at, created_at) AS since FROM outbox WHERE state = 'queued'"
            " ORDER BY since, seq"
        )
    ]


def claimed_memory_ids(db: sqlite3.Connection) -> set[str]:
    """The memories some entry not yet delivered speaks for (sending, queued, dead, given up)."""
    claimed: set[str] = set()
    for row in db.execute("SELECT memory_ids FROM outbox WHERE state != 'delivered'"):
        try:
            claimed.update(str(m) for m in json.loads(row["memory_ids"]))
        except (ValueError, TypeError):
            continue
    return claimed


def hand_over(db: sqlite3.Connection, seq: int, error: str) -> bool:
    """The request could not deliver its ``sending`` entry: queued for the worker, with why."""
    ts = now()
    return (
        db.execute(
            "UPDATE outbox SET state = 'queued', owner = NULL, attempts = attempts + 1, last_error = ?, updated_at = ?,"
            " queued_at = ? WHERE seq = ? AND state = 'sending'",
            (error[:ANSWER_CHARS], ts, ts, seq),
        ).rowcount
        == 1
    )


def sending(db: sqlite3.Connection) -> list[Entry]:
    """Entries a stopped process was delivering itself (at start: settled before serving) — not
    those of an instance still alive: its requests deliver them."""
    return [
        _entry(r)
        for r in db.execute(
            f"SELECT * FROM outbox WHERE state = 'sending' AND (owner IS NULL OR owner NOT IN ({live_ids(db)}))"  # noqa: S608
            " ORDER BY seq"
        )
    ]


def discard(db: sqlite3.Connection, seq: int) -> None:
    """The request's own delivery was refused (the client has the backend's answer): nothing to keep."""
    db.execute("DELETE FROM outbox WHERE seq = ? AND state = 'sending'", (seq,))


def delivered(db: sqlite3.Connection, seq: int, *, keep: bool, backend_operation_id: str | None = None) -> bool:
    """The backend has the entry's items: kept as ``delivered`` without its body (its operation id
    still answers), or deleted (the client had the backend's own answer). Only from ``sending`` or
    ``queued``: False when the entry had moved on (given up meanwhile)."""
    if not keep:
        return db.execute("DELETE FROM outbox WHERE seq = ? AND state IN ('sending', 'queued')", (seq,)).rowcount == 1
    ts = now()
    return (
        db.execute(
            "UPDATE outbox SET state = 'delivered', body = NULL, backend_operation_id = ?, updated_at = ?,"
            " settled_at = ? WHERE seq = ? AND state IN ('sending', 'queued')",
            (backend_operation_id, ts, ts, seq),
        ).rowcount
        == 1
    )


def attempted(db: sqlite3.Connection, seq: int, error: str) -> None:
    """One more delivery attempt failed (the entry stays queued)."""
    db.execute(
        "UPDATE outbox SET attempts = attempts + 1, last_error = ?, updated_at = ?, attempt_by = NULL WHERE seq = ?",
        (error[:ANSWER_CHARS], now(), seq),
    )


def settle(
    db: sqlite3.Connection,
    seq: int,
    state: str,
    *,
    answer: str | None,
    error: str | None = None,
    frm: tuple[str, ...] = ("sending", "queued"),
) -> bool:
    """The entry is done without delivery: ``dead`` (refused; ``answer`` is the backend's) or
    ``given_up``. Its body stays, so that a retry can send it again. Only from a state in ``frm``:
    False when the entry had moved on."""
    assert state in ("dead", "given_up")
    ts = now()
    marks = ",".join("?" * len(frm))
    sql = f"UPDATE outbox SET state = ?, answer = COALESCE(?, answer), last_error = COALESCE(?, last_error), updated_at = ?, settled_at = ? WHERE seq = ? AND state IN ({marks})"  # noqa: E501, S608
    values = (state, answer[:ANSWER_CHARS] if answer else None, error, ts, ts, seq, *frm)
    return db.execute(sql, values).rowcount == 1


def requeue(db: sqlite3.Connection, seq: int) -> bool:
    """A dead or given-up entry queued again (an operator's retry), at the end of its bank's queue
    (a new ``seq``, the same operation id). False when it was not dead or given up any more."""
    row = db.execute("SELECT * FROM outbox WHERE seq = ? AND state IN ('dead', 'given_up')", (seq,)).fetchone()
    if row is None:
        return False
    db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))
    ts = now()
    db.execute(
        "INSERT INTO outbox (operation_id, bank, state, body, memory_ids, supersede, items, request_id, actor,"
        " attempts, last_error, answer, created_at, updated_at, queued_at)"
        " VALUES (?,?,'queued',?,?,?,?,?,?,0,?,?,?,?,?)",
        (
            row["operation_id"],
            row["bank"],
            row["body"],
            row["memory_ids"],
            row["supersede"],
            row["items"],
            row["request_id"],
            row["actor"],
            row["last_error"],
            row["answer"],
            row["created_at"],
            ts,
            ts,
        ),
    )
    return True


def listing(
    db: sqlite3.Connection, *, state: str | None, bank: str | None, limit: int, offset: int
) -> tuple[list[Entry], int]:
    """Entries, newest first, with the total matching."""
    where, params = [], []
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if bank is not None:
        where.append("bank = ?")
        params.append(bank)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    total = db.execute(f"SELECT COUNT(*) FROM outbox{clause}", params).fetchone()[0]  # noqa: S608
    rows = db.execute(
        f"SELECT * FROM outbox{clause} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608
        (*params, limit, offset),
    ).fetchall()
    return [_entry(r) for r in rows], int(total)


def counts(db: sqlite3.Connection, bank: str | None = None) -> dict[str, tuple[int, int]]:
    """State → (entries, items), of one bank or all."""
    found = dict.fromkeys(STATES, (0, 0))
    where, params = (" WHERE bank = ?", (bank,)) if bank is not None else ("", ())
    for row in db.execute(
        f"SELECT state, COUNT(*) AS n, COALESCE(SUM(items), 0) AS items FROM outbox{where} GROUP BY state",  # noqa: S608
        params,
    ):
        found[row["state"]] = (int(row["n"]), int(row["items"]))
    return found


def prune_delivered(db: sqlite3.Connection, before: str) -> int:
    """Forget delivered entries settled before ``before`` (their operation ids answer not_found)."""
    return int(db.execute("DELETE FROM outbox WHERE state = 'delivered' AND settled_at < ?", (before,)).rowcount)
