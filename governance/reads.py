"""The read-path filter, one for every front: what a recall must not return although the backend
still holds it. The Hindsight front applies :func:`withheld` to the answer it relays (its JSON as
the backend gave it), the Mem0 front :func:`visible` to the neutral hits it shapes, the admin
explain marks the same documents excluded."""

from __future__ import annotations

from collections.abc import Sequence

from memwarden.backends.types import Memory
from memwarden.db.memory_reads import withheld_documents
from memwarden.governance.state import AppState


async def withheld(state: AppState, bank: str, document_ids: Sequence[str]) -> set[str]:
    """The documents among ``document_ids`` that hold only memories memwarden archived or
    superseded: their memories never come back from a recall. A document the ledger does not know
    (written around memwarden) is not withheld."""
    if not document_ids:
        return set()
    return await state.ledger.read(lambda db: withheld_documents(db, bank, document_ids))


async def visible(state: AppState, bank: str, memories: Sequence[Memory]) -> list[Memory]:
    """``memories`` (a recall's hits, best first) without those of withheld documents."""
    gone = await withheld(state, bank, [m.document_id for m in memories if m.document_id])
    return [m for m in memories if m.document_id not in gone] if gone else list(memories)
