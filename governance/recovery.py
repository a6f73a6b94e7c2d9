"""Recovery at start: the verdicts a stopped process left pending."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import structlog

from memwarden.backends.base import BackendError, BackendUnavailable, MemoryBackend
from memwarden.db import outbox as outbox_rows
from memwarden.db.audit import append_events
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.deliveries import mark_delivered, mark_failed, orphaned_rows, pending_rows
from memwarden.db.memories import Change
from memwarden.db.memory_reads import row_by_id
from memwarden.governance.deliveries import Corrupt, Parcel, parcel, queue_event, settle_delivered
from memwarden.governance.locks import GateClosed
from memwarden.governance.outbox import Outbox

log = structlog.get_logger("memwarden.recovery")

INTERRUPTED = "interrupted: memwarden stopped before the store answered"
FOUND = "interrupted before the backend's answer; the backend holds its document"
AGAIN = "interrupted before the backend's answer; delivered again at the start"


async def settle_interrupted(
    ledger: Database, held_documents: Callable[[str, Sequence[str]], Awaitable[set[str]]]
) -> tuple[int, int]:
    """Settle the verdicts a stopped process left ``pending`` (killed between its ledger write and
    the store's answer; the client had no answer). A row whose document the store holds becomes
    ``active``, as the lost ``mark_delivered`` would have made it (the supersedes it would have
    applied are not: a topic-key conflict shows in the health report); any other becomes
    ``failed`` with ``forward_failed``, so that a retry is stored and the row says what happened.
    For the self-hosted store only, whose writes share the ledger's database; call it before
    serving — and, on a database other instances share, when one of them is found dead (the
    rows of a live instance are its own, in flight: never touched). Returns (activated, failed)."""
    rows = await ledger.read(orphaned_rows)
    if not rows:
        return 0, 0
    by_bank: dict[str, list[tuple[str, str | None]]] = {}
    for bank, memory_id, document_id in rows:
        by_bank.setdefault(bank, []).append((memory_id, document_id))
    settled: list[tuple[str, list[str], list[str]]] = []
    for bank, memories in by_bank.items():
        held = await held_documents(bank, [d for _, d in memories if d])
        settled.append(
            (
                bank,
                [m for m, d in memories if d in held],
                [m for m, d in memories if d not in held],
            )
        )

    def write(db: Connection) -> None:
        for bank, active, failed in settled:
            # The store holds each document, but not which write of it: its earlier memories stay.
            mark_delivered(
                db, bank=bank, memory_ids=active, supersede=(), request_id=None, actor="memwarden", replaced=False
            )
            mark_failed(db, bank=bank, memory_ids=failed, reason=INTERRUPTED, request_id=None, actor="memwarden")

    await ledger.write(write)
    return sum(len(a) for _, a, _ in settled), sum(len(f) for _, _, f in settled)


async def recover_outbox(ledger: Database, memory: MemoryBackend, outbox: Outbox) -> tuple[int, int, int]:
    """In front of a backend, before serving: settle the deliveries a stopped process was making
    itself (killed between its ledger write and the backend's answer; the client had no answer).
    Rows ``pending`` in no outbox entry (a ledger from before the outbox) get one first. An entry
    whose documents the backend holds is settled delivered (its rows ``active``, audited); the
    others are delivered again now — each item carries its document id, and the backend replaces a
    document retained again, so a delivery that did land is not doubled. An entry that cannot be
    delivered now is queued for the outbox's worker. Returns (found delivered, redelivered, queued).

    On a database shared with other instances nothing is done here: a stopped instance's
    deliveries are queued again by the first instance's beat to find it dead
    (``governance/cluster.py``) and delivered claimed, in order — never twice at once."""
    if ledger.shared:
        return 0, 0, 0
    await ledger.write(_adopt_orphans)
    entries = await ledger.read(outbox_rows.sending)
    found = sent = queued = 0
    down: str | None = None
    for entry in entries:
        try:
            got = parcel(entry)
        except Corrupt as exc:  # reported and skipped: the worker makes it a dead letter
            await ledger.write(partial(_hand_over, entry, str(exc)))
            queued += 1
            continue
        if down is None:
            try:
                held = await memory.held_documents(entry.bank, [i.document_id for i in got.items if i.document_id])
                if all(i.document_id in held for i in got.items):
                    await ledger.write(partial(_found, got))
                    found += 1
                    continue
                if await outbox.deliver(got, attempts=1, source="recovery", action="redeliver", reason=AGAIN):
                    sent += 1
                continue  # delivered, or refused: a dead letter
            except (BackendUnavailable, GateClosed) as exc:  # down: the other entries would wait for it too
                down = str(exc)
            except BackendError as exc:  # this bank's request refused: the worker retries it
                log.warning("redelivery_postponed", bank=entry.bank, error=str(exc))
        await ledger.write(partial(_hand_over, entry, down or "the backend refused it"))
        queued += 1
    if down is not None:
        log.warning("redelivery_postponed", entries=queued, error=down)
    return found, sent, queued


def _hand_over(entry: outbox_rows.Entry, why: str, db: Connection) -> None:
    if outbox_rows.hand_over(db, entry.seq, why):
        append_events(db, [queue_event(entry, f"interrupted by a stop; queued for delivery at the start ({why})")])


def _adopt_orphans(db: Connection) -> None:
    """Pending rows that no outbox entry speaks for get one per bank (``sending``: checked at start)."""
    claimed = outbox_rows.claimed_memory_ids(db)
    by_bank: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for bank, memory_id, _ in pending_rows(db):
        if memory_id in claimed:
            continue
        row = row_by_id(db, memory_id)
        if row is not None and row.item_json:  # every recorded memory keeps its item
            by_bank.setdefault(bank, []).append((memory_id, row.item))
    for bank, found in by_bank.items():
        outbox_rows.enqueue(
            db,
            bank=bank,
            body={"items": [item for _, item in found]},
            memory_ids=[m for m, _ in found],
            supersede=(),
            request_id=None,
            actor="memwarden",
        )


def _found(got: Parcel, db: Connection) -> None:
    change = Change("pending", "active", "deliver", "recovery", got.entry.request_id, "memwarden", reason=FOUND)
    settle_delivered(db, got, change, keep=False)
