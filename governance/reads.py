"""The read-path filter, one for every front: what a recall must not return although the backend
still holds it. The Hindsight front applies :func:`withheld` to the answer it relays (its JSON as
the backend gave it) and the admin explain marks the same documents excluded; the Mem0 front, which
shapes each hit from its ledger memory, takes :func:`live_hits` — a withheld document has no live
memory, so the same hits never come back, in the one ledger read the shaping needs anyway. They
need the ledger and nothing else, and take only it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memwarden.backends.types import Memory
from memwarden.db.database import Database
from memwarden.db.mem0 import live_by_document
from memwarden.db.memory_reads import provenance_by_document, withheld_documents
from memwarden.db.records import LedgerMemory


async def withheld(ledger: Database, bank: str, document_ids: Sequence[str]) -> set[str]:
    """The documents among ``document_ids`` that hold only memories memwarden archived or
    superseded: their memories never come back from a recall. A document the ledger does not know
    (written around memwarden) is not withheld."""
    if not document_ids:
        return set()
    return await ledger.read(lambda db: withheld_documents(db, bank, document_ids))


async def provenance(ledger: Database, bank: str, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Who wrote each of ``document_ids`` (the ledger's writer, channel and time), for a recall
    that asked to see it; documents written around memwarden are not in the answer."""
    if not document_ids:
        return {}
    return await ledger.read(lambda db: provenance_by_document(db, bank, document_ids))


async def live_hits(ledger: Database, bank: str, memories: Sequence[Memory]) -> list[tuple[Memory, LedgerMemory]]:
    """``memories`` (a recall's hits, best first) that the ledger holds live, each with the active
    memory of its document: none of a withheld document (archived, superseded), none written
    around memwarden (no ledger memory to shape it from)."""
    documents = [m.document_id for m in memories if m.document_id]
    held = await ledger.read(lambda db: live_by_document(db, bank, documents)) if documents else {}
    return [(m, held[m.document_id]) for m in memories if m.document_id in held]
