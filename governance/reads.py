"""The read-path filter: what a recall must not return although the backend still holds it."""

from __future__ import annotations

from collections.abc import Sequence

from memwarden.db.memory_reads import withheld_documents
from memwarden.governance.state import AppState


async def withheld(state: AppState, bank: str, document_ids: Sequence[str]) -> set[str]:
    """The documents among ``document_ids`` that hold only memories memwarden archived or
    superseded: their memories never come back from a recall. A document the ledger does not know
    (written around memwarden) is not withheld."""
    if not document_ids:
        return set()
    return await state.ledger.read(lambda db: withheld_documents(db, bank, document_ids))
