"""Archive and restore a memory: out of the backend and back, the ledger following the backend."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.backends.base import MEMORY_STATES, BackendError, BackendRejected, MemoryBackend
from memwarden.backends.types import Item, MemoryQuery
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memories import Change, move
from memwarden.db.memory_reads import active_siblings, row_by_id
from memwarden.db.records import LedgerMemory
from memwarden.governance.errors import Refused
from memwarden.governance.locks import BankLocks

CURATABLE = ("world", "experience")  # Hindsight curates only these fact types


UNIT_PAGE = 1000


async def document_units(memory: MemoryBackend, bank: str, document_id: str, which: str) -> list[str]:
    """The ids of the backend's curatable facts of one document, ``valid`` or ``invalidated`` ones
    (Hindsight lists one state at a time)."""
    query = MemoryQuery(document_id=document_id, state=which, limit=UNIT_PAGE)
    page = await memory.list_memories(bank, query)
    return [u.id for u in page.items if (u.kind or "world") in CURATABLE]


class StateChangeFailed(Exception):
    """The backend failed while switching facts; ``stuck`` lists those that could not be switched
    back (empty: everything was undone)."""

    def __init__(self, cause: BackendError, stuck: list[str]) -> None:
        super().__init__(str(cause))
        self.cause, self.stuck = cause, stuck

    def detail(self, what: str, ledger: str) -> str:
        left = f"; {len(self.stuck)} facts could not be switched back: {', '.join(self.stuck)}" if self.stuck else ""
        return f"the backend did not {what} it ({self.cause}); {ledger}{left or ', nothing left half-done'}"


async def _set_state(memory: MemoryBackend, bank: str, units: list[str], to: str, reason: str) -> list[str]:
    """Move ``units`` to ``to``; on a failure, move the ones already done back and raise
    :class:`StateChangeFailed` naming any that stayed."""
    done: list[str] = []
    back = "valid" if to == "invalidated" else "invalidated"
    try:
        for unit_id in units:
            await memory.set_memory_state(bank, unit_id, to, reason=reason if to == "invalidated" else None)
            done.append(unit_id)
    except BackendError as exc:
        stuck = []
        for unit_id in done:
            try:
                await memory.set_memory_state(bank, unit_id, back)
            except BackendError:
                stuck.append(unit_id)
        raise StateChangeFailed(exc, stuck) from exc
    return done


def shared_document(memory_id: str, document_id: str | None, siblings: Sequence[str], *, op: str = "archive") -> str:
    """Why ``memory_id`` cannot be archived (restored) alone: the backend archives (restores) a whole
    document."""
    shown = ", ".join(siblings[:10]) + (" …" if len(siblings) > 10 else "")
    state, verb = ("active", "archiving") if op == "archive" else ("archived", "restoring")
    return (
        f"Memory '{memory_id}' shares document '{document_id}' with {len(siblings)} other {state} memories"
        f" ({shown}); {verb} it would take theirs too: {op} them together in one plan"
    )


def _restored_with(db: Connection, bank: str, row: LedgerMemory, together: Collection[str]) -> list[LedgerMemory]:
    """The archived memories of ``row``'s document among ``together`` (a plan's restores)."""
    ids = active_siblings(db, bank, row.document_id, row.id, status="archived")
    return [found for i in ids if i in together and (found := row_by_id(db, i, bank=bank)) is not None]


@dataclass(frozen=True)
class Archiver:
    """Archive and restore one memory: the ledger, the backend, and the banks' locks (an operator's
    change is not beside a plan's or retention's on the same bank)."""

    ledger: Database
    memory: MemoryBackend
    bank_locks: BankLocks

    async def _locked_row(self, bank: str, memory_id: str, want: str, verb: str) -> LedgerMemory:
        row = await self.ledger.read(lambda db: row_by_id(db, memory_id, bank=bank))
        if row is None:
            raise Refused(404, f"Memory '{memory_id}' not found in bank '{bank}'")
        if row.status != want:
            raise Refused(409, f"Memory '{memory_id}' is {row.status}; only {want} memories can be {verb}")
        return row

    async def archive(
        self,
        bank: str,
        memory_id: str,
        *,
        reason: str,
        request_id: str,
        action: str = "archive",
        source: str = "operator",
        locked: bool = False,
        together: Collection[str] = (),
    ) -> dict[str, Any]:
        """Archive one memory (see the module's doc); the backend's account. Raises :class:`Refused`.
        ``locked``: the caller holds the bank's lock already (plans, retention); ``together``: the
        memories archived with it (a plan's), which may share its document."""
        if not locked:
            async with self.bank_locks(bank):
                return await self.archive(
                    bank,
                    memory_id,
                    reason=reason,
                    request_id=request_id,
                    action=action,
                    source=source,
                    locked=True,
                    together=together,
                )
        row = await self._locked_row(bank, memory_id, "active", "archived")
        document_id = row.document_id
        siblings = await self.ledger.read(
            lambda db: active_siblings(db, bank, document_id, memory_id, besides=together)
        )
        if siblings:
            raise Refused(409, shared_document(memory_id, document_id, siblings))
        if MEMORY_STATES not in self.memory.capabilities:  # Mem0: out of the backend, back from the ledger's item
            return await self._archive_by_deleting(bank, memory_id, document_id, reason, request_id, action, source)
        try:
            units = await document_units(self.memory, bank, document_id, "valid") if document_id else []
            done = await _set_state(self.memory, bank, units, "invalidated", reason)
        except StateChangeFailed as exc:
            raise Refused(502, exc.detail("archive", "the ledger still says active")) from exc
        except BackendError as exc:
            raise Refused(502, f"the backend did not archive it ({exc}); nothing changed") from exc
        note = f"{len(done)} backend facts of document {document_id} invalidated"
        await self._record(request_id, bank, memory_id, "active", "archived", action, source, f"{reason} ({note})")
        return {"invalidated": done}

    async def _archive_by_deleting(
        self,
        bank: str,
        memory_id: str,
        document_id: str | None,
        reason: str,
        request_id: str,
        action: str,
        source: str,
    ) -> dict[str, Any]:
        """Archive on a backend without memory states: the document deleted there (a restore
        retains the ledger's item again)."""
        removed = False
        if document_id:
            try:
                await self.memory.delete_document(bank, document_id)
                removed = True
            except BackendRejected as exc:
                if exc.status != 404:  # gone already: archived all the same
                    raise Refused(502, f"the backend did not archive it ({exc}); nothing changed") from exc
            except BackendError as exc:
                raise Refused(502, f"the backend did not archive it ({exc}); nothing changed") from exc
        note = f"document {document_id} {'deleted from' if removed else 'not held by'} the backend"
        await self._record(request_id, bank, memory_id, "active", "archived", action, source, f"{reason} ({note})")
        return {"invalidated": [], "deleted_document": document_id if removed else None}

    async def restore(
        self,
        bank: str,
        memory_id: str,
        *,
        reason: str | None,
        request_id: str,
        locked: bool = False,
        together: Collection[str] = (),
    ) -> dict[str, Any]:
        """Restore one archived memory; the backend's account. Raises :class:`Refused`. ``together``:
        the memories restored with it (a plan's), which may share its document."""
        if not locked:
            async with self.bank_locks(bank):
                return await self.restore(
                    bank, memory_id, reason=reason, request_id=request_id, locked=True, together=together
                )
        row = await self._locked_row(bank, memory_id, "archived", "restored")
        document_id = row.document_id
        archived = await self.ledger.read(
            lambda db: active_siblings(db, bank, document_id, memory_id, besides=together, status="archived")
        )
        if archived:  # the backend restores the whole document: an undo must not come back in part
            raise Refused(409, shared_document(memory_id, document_id, archived, op="restore"))
        try:
            units = await document_units(self.memory, bank, document_id, "invalidated") if document_id else []
            if units:
                backend: dict[str, Any] = {"revalidated": await _set_state(self.memory, bank, units, "valid", "")}
            elif document_id and await document_units(self.memory, bank, document_id, "valid"):
                backend = {"revalidated": []}  # already back (restored around memwarden)
            else:  # the facts are gone: retain the memory again, as memwarden forwarded it
                rows = [row]
                if together and document_id:  # and those of its document restored with it, in one go
                    rows += await self.ledger.read(lambda db: _restored_with(db, bank, row, together))
                items = []
                for one in rows:
                    item = dict(one.item) or {"content": one.content, "tags": list(one.tags)}
                    item.setdefault("document_id", document_id)
                    items.append(item)
                if await self.ledger.read(lambda db: active_siblings(db, bank, document_id, memory_id)):
                    for item in items:  # its document holds other memories: added to it
                        item["update_mode"] = "append"
                await self.memory.retain(bank, [Item.from_json(item) for item in items])
                backend = {"recreated": True}
        except StateChangeFailed as exc:
            raise Refused(502, exc.detail("restore", "the memory stays archived")) from exc
        except BackendRejected as exc:
            raise Refused(502, f"the backend refused the restore ({exc}); the memory stays archived") from exc
        except BackendError as exc:
            raise Refused(502, f"the backend did not restore it ({exc}); the memory stays archived") from exc
        note = (
            "re-created from the ledger"
            if backend.get("recreated")
            else f"{len(backend['revalidated'])} facts re-validated"
        )
        await self._record(request_id, bank, memory_id, "archived", "active", "restore", "operator", reason or note)
        return backend

    async def _record(
        self,
        request_id: str,
        bank: str,
        memory_id: str,
        frm: str,
        to: str,
        action: str,
        source: str,
        reason: str,
    ) -> None:
        def write(db: Connection) -> None:
            move(db, bank, [memory_id], Change(frm, to, action, source, request_id, reason=reason))

        await self.ledger.write(write)
