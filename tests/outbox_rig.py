"""The outbox under test: a backend stand-in that counts deliveries (a fake: failure injection),
the real outbox over a real ledger, an entry put in the outbox as a retain leaves it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from memwarden.backends.base import BackendUnavailable
from memwarden.backends.types import Receipt
from memwarden.db import outbox as rows
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.governance.locks import BankGates
from memwarden.governance.outbox import Outbox
from memwarden.governance.review import Review
from memwarden.metrics import Metrics
from memwarden.settings import OutboxSettings


class Backend:
    """Counts deliveries; the first ``fail_first`` fail as unreachable (or answered ``status``)."""

    def __init__(self, fail_first: int = 0, status: int | None = None) -> None:
        self.calls = 0
        self.fail_first = fail_first
        self.status = status
        self.items: list[str] = []

    async def retain(self, bank: str, items: Any, **kw: Any) -> Receipt:
        self.calls += 1
        if self.calls <= self.fail_first:
            raise BackendUnavailable("down", status=self.status)
        self.items.extend(i.content for i in items)
        return Receipt(len(items), "backend-op")


def make_outbox(ledger: Database, backend: Backend, **settings: Any) -> Outbox:
    memory: Any = backend  # only its retain is called
    return Outbox(
        ledger,
        memory,
        Review(ledger, memory),
        BankGates(),
        Metrics(),
        OutboxSettings(**{"retry_initial": 0.05, "retry_max": 0.2, **settings}),
        write_wait=5.0,
    )


def add_entry(db: Any, bank: str, text: str, state: str = "queued", owner: str | None = None) -> rows.Entry:
    """A pending memory and the outbox entry that delivers it."""
    memory_id, ts = f"m-{text}", now()
    item = {"content": text, "document_id": f"doc-{text}"}
    db.execute(
        "INSERT INTO memories (id, bank, status, content, content_hash, item, created_at, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (memory_id, bank, "pending", text, f"h-{text}", json.dumps(item), ts, ts),
    )
    return rows.enqueue(
        db,
        bank=bank,
        body={"items": [item]},
        memory_ids=[memory_id],
        supersede=(),
        request_id="r",
        actor="a",
        state=state,
        owner=owner,
    )


async def until(check: Any) -> None:
    """Wait (at most 30 s: a loaded machine running the whole suite) until ``await check()`` is true."""
    async with asyncio.timeout(30):
        while not await check():  # noqa: ASYNC110 - polling what another task changes, on purpose
            await asyncio.sleep(0.02)


async def status_of(ledger: Database, memory_id: str) -> str:
    return str(
        await ledger.read(lambda db: db.execute("SELECT status FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])
    )
