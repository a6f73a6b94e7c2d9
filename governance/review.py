"""The review queue's decisions: approve a held item (it supersedes the memory it conflicted with) or reject it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import structlog

from memwarden.backends.base import BackendError, BackendRejected, MemoryBackend
from memwarden.backends.types import Item
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memories import Change, move
from memwarden.db.memory_reads import active_siblings, row_by_id
from memwarden.db.records import LedgerMemory
from memwarden.governance.errors import Refused

log = structlog.get_logger("memwarden.review")


@dataclass(frozen=True)
class Review:
    """The review queue's decisions, and taking a superseded memory out of the backend: what the
    ledger holds and the backend governance calls."""

    ledger: Database
    memory: MemoryBackend

    async def _held(self, bank: str, memory_id: str) -> LedgerMemory | None:
        return await self.ledger.read(lambda db: row_by_id(db, memory_id, bank=bank))

    async def _held_for_review(self, bank: str, memory_id: str) -> LedgerMemory:
        """The held row; :class:`Refused` 404 (unknown) / 409 (not held)."""
        row = await self._held(bank, memory_id)
        if row is None:
            raise Refused(404, f"no memory {memory_id} in bank '{bank}'")
        if row.status != "review":
            raise Refused(409, f"memory {memory_id} is {row.status}, not held for review")
        return row

    async def supersede_in_backend(self, bank: str, old: LedgerMemory) -> str:
        """Remove a superseded memory's document from the backend when that is safe; say what happened."""
        document_id = old.document_id or ""
        if not document_id.startswith("mw-"):
            return "kept in the backend (its document is the client's)"
        try:
            await self.memory.delete_document(bank, document_id)
        except BackendRejected as exc:
            if exc.status == 404:
                return "already gone from the backend"
            raise
        return f"document {document_id} removed from the backend"

    async def retire(self, bank: str, memory_id: str) -> None:
        """Take a superseded memory out of the backend where that is safe (the ledger keeps it)."""
        row = await self.ledger.read(lambda db: row_by_id(db, memory_id))
        if row is None:
            return
        try:
            outcome = await self.supersede_in_backend(bank, row)
        except BackendError as exc:
            outcome = f"still in the backend: {exc}"
        log.info("superseded", bank=bank, memory_id=memory_id, backend=outcome)

    async def approve(self, bank: str, memory_id: str, *, request_id: str) -> dict[str, Any]:
        """Forward a held item; it becomes active and supersedes the memory it conflicted with — and,
        for a new version of a memory (a Mem0 update), the version it was to replace, which must still
        be the live one (409 otherwise: that memory changed since)."""
        row = await self._held_for_review(bank, memory_id)
        replaced = await self._held(bank, row.replaces) if row.replaces else None
        if replaced is not None and replaced.status != "active":
            raise Refused(
                409,
                f"memory {memory_id} is a new version of {replaced.id}, which is {replaced.status} now"
                " (it changed since this one was held): reject it, or write it anew",
            )
        item = dict(row.item)
        siblings = await self.ledger.read(lambda db: active_siblings(db, bank, row.document_id, memory_id))
        if siblings and row.document_id:
            # Its document holds other memories (those of its request that were stored, or earlier
            # ones): added to it — retained alone it would replace the document and lose them.
            item["update_mode"] = "append"
        try:
            await self.memory.retain(bank, [Item.from_json(item)])
        except BackendError as exc:
            raise Refused(502, f"the backend did not take the approved item: {exc}") from exc
        old = await self._held(bank, row.conflict_with) if row.conflict_with else None
        note = ""
        if old is not None and old.status == "active":
            try:
                note = await self.supersede_in_backend(bank, old)
            except BackendError as exc:
                note = f"still in the backend: {exc}"

        if replaced is not None:
            try:
                replaced_note = await self.supersede_in_backend(bank, replaced)
            except BackendError as exc:
                replaced_note = f"still in the backend: {exc}"

        def record(db: Connection) -> None:
            move(db, bank, [memory_id], Change("review", "active", "approve", "review", request_id))
            if old is not None and (replaced is None or old.id != replaced.id):
                why = f"superseded by approved {memory_id}; {note}"
                superseded = Change(
                    "active", "superseded", "supersede", "review", request_id, rule="topic_key.conflict"
                )
                move(db, bank, [old.id], replace(superseded, reason=why, by=memory_id))
            if replaced is not None:
                why = f"updated: superseded by approved {memory_id}; {replaced_note}"
                updated = Change("active", "superseded", "supersede", "review", request_id, rule="update")
                move(db, bank, [replaced.id], replace(updated, reason=why, by=memory_id))

        await self.ledger.write(record)
        return {
            "id": memory_id,
            "status": "active",
            "superseded": old.id if old is not None else None,
            "replaced": replaced.id if replaced is not None else None,
            "backend": note or None,
        }

    async def reject(self, bank: str, memory_id: str, *, request_id: str) -> dict[str, Any]:
        """Drop a held item (kept in the ledger as ``rejected``)."""
        await self._held_for_review(bank, memory_id)

        def record(db: Connection) -> None:
            move(db, bank, [memory_id], Change("review", "rejected", "reject_review", "review", request_id))

        await self.ledger.write(record)
        return {"id": memory_id, "status": "rejected"}
