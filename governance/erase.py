"""Erase memories: out of the backend for good, their text out of the ledger, a hash left in the
audit. What a Mem0 client's delete_all and entity deletes do (and a delete, with
``[mem0] hard_delete``); an archive (governance/archive.py) is the restorable kind.

The backend first, document by document; the ledger follows for those the backend let go. A
document that also holds live memories not being erased (a Hindsight client's shared document)
is refused rather than taken with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import structlog

from memwarden.backends.base import BackendError, BackendRejected, MemoryBackend, Purging
from memwarden.db import mem0
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memory_reads import active_ids
from memwarden.db.records import LedgerMemory
from memwarden.governance.errors import Refused
from memwarden.governance.locks import BankLocks

log = structlog.get_logger("memwarden.erase")
HELD = mem0.TEXT_HOLDING  # statuses whose rows hold text


@dataclass(frozen=True)
class Eraser:
    """Erasure: the ledger, the backend, and the banks' locks."""

    ledger: Database
    memory: MemoryBackend
    bank_locks: BankLocks

    async def erase(
        self, bank: str, rows: Sequence[LedgerMemory], *, reason: str, request_id: str, locked: bool = False
    ) -> int:
        """Erase ``rows`` (ledger rows of ``bank``, any version); how many were erased. Raises
        :class:`Refused` (502 when the backend failed: those erased before it are named in the audit,
        the others keep their text; 409 for a shared document, or for a memory still queued for
        delivery, which nothing is erased with). ``locked``: the caller holds the bank's lock already (and
        read ``rows`` under it)."""
        rows = [r for r in rows if r.status in HELD]
        if not rows:
            return 0
        waiting = sum(r.status == "pending" for r in rows)
        if waiting:  # its delivery, queued, would write it back into the backend after the erasure
            raise Refused(
                409,
                f"{waiting} of these memories are waiting for delivery to the backend; erase them once"
                " delivered (GET /warden/v1/outbox shows the queue)",
            )
        if not locked:
            async with self.bank_locks(bank):
                return await self.erase(bank, rows, reason=reason, request_id=request_id, locked=True)
        ids = {r.id for r in rows}
        by_document: dict[str | None, list[str]] = {}
        for row in rows:
            by_document.setdefault(row.document_id, []).append(row.id)
        done: list[str] = []
        try:
            for document_id, members in by_document.items():
                if document_id:
                    live = await self.ledger.read(partial(active_ids, bank=bank, document_id=document_id))
                    others = [m for m in live if m not in ids]
                    if others:
                        raise Refused(
                            409,
                            f"document '{document_id}' also holds {len(others)} other live memories;"
                            " erase them together or archive this one",
                        )
                    try:
                        await self.memory.delete_document(bank, document_id)
                    except BackendRejected as exc:
                        if exc.status != 404:  # already gone (superseded, retired): nothing to remove
                            raise
                done += members
        except BackendError as exc:
            raise Refused(502, f"the backend did not delete it ({exc}); {len(done)} erased before the failure") from exc
        finally:
            if done:

                def write(db: Connection) -> None:
                    mem0.erase(db, bank, done, source="mem0", reason=reason, request_id=request_id)

                await self.ledger.write(write)
                await self.purge_files()
        return len(done)

    async def purge_files(self) -> None:
        """What was erased made unrecoverable from the files on this machine: the self-hosted store's
        indexes rewritten, the ledger's write-ahead log checkpointed (its old page images overwritten).
        Best effort, after the erasure is recorded: a failure here is logged, not the client's."""
        try:
            if isinstance(self.memory, Purging):
                await self.memory.purge()
            await self.ledger.truncate_wal()
        except Exception:  # the erasure itself is done and recorded
            log.warning("purge_failed", exc_info=True)
