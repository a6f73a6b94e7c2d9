"""``GET /warden/metrics``: Prometheus' text format (:mod:`memwarden.metrics`).

The counters and histograms are recorded as requests, verdicts, backend calls, deliveries and
guarded changes happen; the gauges are read here, when the page is asked for: the outbox (depth,
oldest age, dead letters, full), the ledger's memories by status, the database's size on disk and
the self-hosted store's units.
"""

from __future__ import annotations

from pathlib import Path

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import self_hosted
from memwarden.db.memory_reads import STATUSES
from memwarden.db.reports import status_totals
from memwarden.governance.state import AppState
from memwarden.metrics import CONTENT_TYPE


def _size(path: Path) -> int:
    """The database with its WAL and shared-memory files."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += path.with_name(path.name + suffix).stat().st_size
        except OSError:
            continue
    return total


async def warden_metrics(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    m = state.metrics
    totals = await state.ledger.read(status_totals)
    for status in {*STATUSES, *totals}:  # a status no row has any more reads 0, not its last count
        m.ledger_memories.labels(status).set(totals.get(status, 0))
    m.database_bytes.set(_size(state.ledger.path))
    own = self_hosted(state.memory)
    if own is not None:
        m.store_units.set((await own.index_counts("", fulltext=False))["all_banks_rows"])
    if state.outbox is not None:
        # Read last, with no await before the page is rendered: the queue and the delivered
        # counter are one moment (a delivery settling meanwhile is in both or in neither).
        summary = await state.outbox.summary()
        m.outbox_queued_items.set(summary.queued_items)
        m.outbox_queued_entries.set(summary.queued_entries)
        m.outbox_oldest_seconds.set(summary.oldest_age_s or 0.0)
        m.outbox_dead_letters.set(summary.dead_letters)
        m.outbox_full.set(1.0 if summary.full else 0.0)
    body = m.render()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", CONTENT_TYPE.encode()), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
