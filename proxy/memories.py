"""Refusals of operations on memories, and the settling of verdicts a stopped process left
pending (the rows themselves: :mod:`memwarden.db.memories`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.types import Send

from memwarden.db.database import Database
from memwarden.db.memories import mark_delivered, mark_failed, pending_rows
from memwarden.fronts.asgi import send_json


class Refused(Exception):
    """An operation on a memory that cannot be done: ``status`` and ``detail`` are the HTTP answer.
    Nothing was changed, or what was left is named in ``detail``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


async def answer(send: Send, work: Awaitable[dict[str, Any]]) -> None:
    """Answer ``work``'s result with 200, or its :class:`Refused` with the refusal's status."""
    try:
        body = await work
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 200, body)


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

    def write(db: sqlite3.Connection) -> None:
        for bank, active, failed in settled:
            mark_delivered(db, bank=bank, memory_ids=active, supersede=(), request_id=None, actor="memwarden")
            mark_failed(db, bank=bank, memory_ids=failed, reason=INTERRUPTED, request_id=None, actor="memwarden")

    await ledger.write(write)
    return sum(len(a) for _, a, _ in settled), sum(len(f) for _, _, f in settled)
