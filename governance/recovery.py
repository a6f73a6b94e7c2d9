"""Recovery at start: the verdicts a stopped process left pending."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import structlog

from memwarden.backends.base import BackendError, BackendUnavailable, MemoryBackend
from memwarden.backends.types import Item
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memories import Change, mark_delivered, mark_failed, move, pending_rows
from memwarden.db.memory_reads import row_by_id

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
    serving. Returns (activated, failed)."""
    rows = await ledger.read(pending_rows)
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
            mark_delivered(db, bank=bank, memory_ids=active, supersede=(), request_id=None, actor="memwarden")
            mark_failed(db, bank=bank, memory_ids=failed, reason=INTERRUPTED, request_id=None, actor="memwarden")

    await ledger.write(write)
    return sum(len(a) for _, a, _ in settled), sum(len(f) for _, _, f in settled)


async def redeliver_interrupted(ledger: Database, memory: MemoryBackend) -> tuple[int, int, int]:
    """In front of a backend: settle the verdicts a stopped process left ``pending`` (killed
    between its ledger write and the backend's answer). A row whose document the backend holds
    becomes ``active``; the others are delivered again from the ledger (the item as memwarden
    forwarded it, with its document id: the backend replaces a document re-retained, so a
    delivery that did land is not doubled), then ``active``. A backend that cannot be reached
    leaves the rows ``pending`` for the next start (logged). Call it before serving. Returns
    (found delivered, redelivered, left pending)."""
    rows = await ledger.read(pending_rows)
    if not rows:
        return 0, 0, 0
    by_bank: dict[str, list[tuple[str, str | None]]] = {}
    for bank, memory_id, document_id in rows:
        by_bank.setdefault(bank, []).append((memory_id, document_id))
    found = sent = left = 0
    for bank, memories in by_bank.items():
        try:
            held = await memory.held_documents(bank, [d for _, d in memories if d])
            present = [m for m, d in memories if d in held]
            missing = [m for m, d in memories if d not in held]
            items = []
            for memory_id in missing:
                row = await ledger.read(partial(row_by_id, memory_id=memory_id))
                if row is not None and row["item"]:  # every recorded row keeps its item
                    items.append(Item.from_json(json.loads(row["item"])))
            if items:
                await memory.retain(bank, items)
        except BackendUnavailable as exc:  # down: the other banks would wait for it too
            left = sum(len(m) for m in by_bank.values()) - found - sent
            log.warning("redelivery_postponed", banks=len(by_bank), pending=left, error=str(exc))
            break
        except BackendError as exc:  # this bank's request refused: the others may go
            log.warning("redelivery_postponed", bank=bank, pending=len(memories), error=str(exc))
            left += len(memories)
            continue

        def write(db: Connection, bank: str = bank, present: list[str] = present, missing: list[str] = missing) -> None:
            move(db, bank, present, Change("pending", "active", "deliver", "recovery", None, "memwarden", reason=FOUND))
            move(
                db, bank, missing, Change("pending", "active", "redeliver", "recovery", None, "memwarden", reason=AGAIN)
            )

        await ledger.write(write)
        found += len(present)
        sent += len(missing)
    return found, sent, left
