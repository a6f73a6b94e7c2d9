"""Recovery at start: the verdicts a stopped process left pending."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memories import mark_delivered, mark_failed, pending_rows

INTERRUPTED = "interrupted: memwarden stopped before the store answered"


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
