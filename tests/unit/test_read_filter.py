"""governance/reads.py, the read-path filter every front applies: a recalled memory of a document
memwarden archived comes back from no front; one the ledger does not know passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwarden.backends.types import Memory
from memwarden.db.database import Database
from memwarden.db.memories import Change, move
from memwarden.governance.reads import live_hits, withheld
from tests.conftest import database_url

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]


def _add(db: object, memory_id: str, document_id: str) -> None:
    db.execute(  # type: ignore[attr-defined]
        "INSERT INTO memories (id, bank, status, content, content_hash, document_id, created_at, updated_at)"
        " VALUES (?, 'b', 'active', ?, ?, ?, '2026-01-01', '2026-01-01')",
        (memory_id, f"text {memory_id}", f"hash {memory_id}", document_id),
    )


async def test_hits_of_an_archived_document_come_back_from_no_front(tmp_path: Path) -> None:
    ledger = Database.open(tmp_path, url=database_url())  # the filter needs the ledger and nothing else
    try:
        await ledger.write(lambda db: (_add(db, "m1", "d-archived"), _add(db, "m2", "d-live")))
        await ledger.write(lambda db: move(db, "b", ["m1"], Change("active", "archived", "archive", "test", None)))
        hits = [
            Memory(id="u1", text="archived fact", document_id="d-archived"),
            Memory(id="u2", text="live fact", document_id="d-live"),
            Memory(id="u3", text="written around memwarden", document_id="d-unknown"),
            Memory(id="u4", text="no document"),
        ]
        # The Hindsight front relays what the ledger does not withhold: unknown documents pass.
        assert await withheld(ledger, "b", ["d-archived", "d-live", "d-unknown"]) == {"d-archived"}
        assert await withheld(ledger, "other-bank", ["d-archived"]) == set()
        # The Mem0 front shapes from the ledger: only hits it holds live, each with its memory.
        live = await live_hits(ledger, "b", hits)
        assert [(m.id, row.id, row.status) for m, row in live] == [("u2", "m2", "active")]
        assert await live_hits(ledger, "other-bank", hits) == []
    finally:
        ledger.close()
