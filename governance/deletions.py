"""A governed DELETE's account in the ledger, so that it can be undone: what it archived, with the
snapshot that restores it, and what it takes that memwarden never wrote.

A bank memwarden was put in front of may hold documents written before it was there (or past it):
the ledger has no copy of them, so a rollback could not re-create them. Before a governed DELETE
of a bank, of its memories or of a document, the documents it will remove that the ledger cannot
re-create are read from the backend — their original text, tags, time, context — and, once the
backend has deleted, written to the ledger as ``archived`` rows of that deletion, every field masked
of secrets (memwarden stores none). ``memwarden restore`` then re-creates them with the rest; past
``config_guard.restore_days`` retention erases them with the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog

from memwarden.backends.base import BackendError, BackendRejected, MemoryBackend
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memories import Change, move, record_kept
from memwarden.db.memory_reads import (
    KEPT_RULE,
    active_by_document,
    active_ids,
    document_statuses,
    restorable_rows,
)
from memwarden.db.snapshots import Snapshot
from memwarden.governance.config_guard import inventory, set_outcome
from memwarden.policies.field_secrets import masked
from memwarden.policies.secrets import find_secrets

log = structlog.get_logger("memwarden.deletions")
READS_AT_ONCE = 8


def _in_scope(snap: Snapshot, reason: str, document_id: str | None, kind: str | None) -> list[str]:
    """The documents the DELETE removes, by the snapshot's inventory."""
    inventory = snap.inventory or {}
    documents = [str(d["id"]) for d in inventory.get("documents", ())]
    if document_id is not None:
        return [document_id] if document_id in documents else []
    if reason == "delete_memories" and kind:
        if kind not in FACTS:  # an observation wipe takes no fact: nothing to keep
            return []
        return sorted(
            {
                str(u["document_id"])
                for u in inventory.get("memories", ())
                if u.get("fact_type") == kind and u.get("document_id")
            }
        )
    return documents


def _item(document_id: str, document: Mapping[str, Any], tags: Sequence[str]) -> dict[str, Any] | None:
    """The retain item that re-creates a document, every field masked of secrets (memwarden keeps
    none in clear); None without text."""
    text = document.get("original_text")
    if not isinstance(text, str) or not text.strip():
        return None
    item: dict[str, Any] = {"content": masked(text), "document_id": document_id}
    clean = [t for t in tags if not find_secrets(t)]  # a tag holding a secret is dropped, not masked
    if clean:
        item["tags"] = clean
    given = document.get("retain_params")
    params: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    when = params.get("event_date") or document.get("created_at")
    if isinstance(when, str):
        item["timestamp"] = when
    context = params.get("context")
    if isinstance(context, str) and context:
        item["context"] = masked(context)
    metadata = document.get("document_metadata")
    if isinstance(metadata, Mapping) and metadata and all(isinstance(v, str) for v in metadata.values()):
        item["metadata"] = {str(k): masked(v) for k, v in metadata.items()}
    return item


FACTS = ("world", "experience")  # what the ledger's memories are (it keeps no observations)


KEPT_OUT = frozenset({"rejected", "review", "erased"})  # never delivered to the backend


@dataclass(frozen=True)
class Deletions:
    """A governed DELETE's account: the ledger, the backend, and the page size its inventory reads."""

    ledger: Database
    memory: MemoryBackend
    inventory_page: int

    async def unledgered(
        self, snap: Snapshot, *, reason: str, document_id: str | None, kind: str | None
    ) -> list[dict[str, Any]]:
        """Before a DELETE: the items that re-create what it removes and the ledger holds no copy of.
        Raises BackendError when the backend cannot be read (the caller deletes nothing then)."""
        wanted = _in_scope(snap, reason, document_id, kind)
        if not wanted:
            return []
        copies = await self.ledger.read(lambda db: restorable_rows(db, snap.bank, wanted))
        missing = [d for d in wanted if d not in copies]
        gate = asyncio.Semaphore(READS_AT_ONCE)

        async def read(doc: str) -> dict[str, Any] | None:
            async with gate:
                try:
                    document = await self.memory.get_document(snap.bank, doc)
                except BackendRejected as exc:
                    if exc.status == 404:  # gone meanwhile: nothing to keep
                        return None
                    raise
            return _item(doc, document.extra, document.tags)

        items = await asyncio.gather(*(read(d) for d in missing))
        return [i for i in items if i is not None]

    async def finished(
        self,
        snap: Snapshot,
        *,
        status: int,
        reason: str,
        document_id: str | None,
        kind: str | None,
        kept: Sequence[dict[str, Any]],
        request_id: str,
    ) -> None:
        """A DELETE (``reason``: delete_bank, delete_memories, delete_document) answered by the backend
        with ``status``: the snapshot's outcome, and on success the ledger follows in one transaction —
        the deleted memories stop counting as active (dedup would otherwise call a re-sent fact a
        duplicate of something gone), archived with the snapshot that restores them, and ``kept`` (from
        :func:`unledgered`) archived beside them. Content is kept, until ``restore_days``.

        A DELETE of one kind of memory (``?type=world``) leaves the documents that hold others: only the
        memories of documents it left with no fact (:func:`_emptied`) are archived — an ``observation``
        wipe archives none: the ledger keeps no observations."""
        ok = 200 <= status < 300
        if not ok:
            await set_outcome(self.ledger, snap, "failed", {"backend_status": status})
            return
        bank = snap.bank
        detail: dict[str, Any] = {"backend_status": status}
        if reason == "delete_memories" and kind:
            gone, unread = await self._emptied(snap, kind)
            live = await self.ledger.read(lambda db: active_by_document(db, bank))
            ids = [m for d in sorted(gone) for m in live.get(d, [])]
            kept = [i for i in kept if i["document_id"] in gone]
            if unread:
                detail["documents_judged_from_the_snapshot"] = unread
        else:
            ids = await self.ledger.read(lambda db: active_ids(db, bank, document_id))
        why = f"deleted in the backend ({reason}); snapshot {snap.id} can restore it"
        change = Change(
            "active", "archived", "archive", "config", request_id, rule=reason, reason=why, snapshot=snap.id
        )
        unwritten = replace(
            change, frm="backend", rule=KEPT_RULE, reason=f"{why} (never written through memwarden: read back from it)"
        )

        def write(db: Connection) -> None:
            move(db, bank, ids, change)
            if kept:
                record_kept(db, bank, kept, unwritten)

        await self.ledger.write(write)
        await set_outcome(self.ledger, snap, "applied", detail)
        if kept:
            log.info("deletion_kept", bank=bank, snapshot=snap.id, documents=len(kept))

    async def _emptied(self, snap: Snapshot, kind: str) -> tuple[set[str], str | None]:
        """The documents a DELETE of the ``kind`` memories left with no fact: of those that had such
        facts in the snapshot, the ones with none now. When the bank cannot be read after the delete,
        judged from the snapshot — those whose facts were all of ``kind`` — and why is the second value."""
        if kind not in FACTS:
            return set(), None
        before = (snap.inventory or {}).get("memories", ())
        had = {str(u["document_id"]) for u in before if u.get("fact_type") == kind and u.get("document_id")}
        try:
            now = await inventory(self.memory, snap.bank, self.inventory_page)
        except BackendError as exc:
            log.warning("typed_delete_unread", bank=snap.bank, error=str(exc))
            others = {
                str(u.get("document_id")) for u in before if u.get("fact_type") in FACTS and u.get("fact_type") != kind
            }
            return had - others, f"the bank could not be read after the delete ({type(exc).__name__})"
        facts = {u.get("document_id") for u in now["memories"] if u.get("fact_type") in FACTS}
        return had - facts, None

    async def forget_kept_out(self, bank: str, document_id: str, request_id: str) -> bool:
        """A DELETE of a document memwarden kept out of the backend — each of its memories rejected or
        held for review, none delivered — that the backend does not hold either: the client deleting
        what it sent. True, once those held for review are rejected (an approval must not bring back a
        document its client deleted); the caller answers as the backend answers a delete. False for any
        other document: the backend's delete decides."""
        statuses = await self.ledger.read(lambda db: document_statuses(db, bank, document_id))
        if not statuses or not set(statuses) <= KEPT_OUT:
            return False
        if await self.memory.held_documents(bank, [document_id]):
            return False
        why = "its client deleted the document while it waited for review"
        change = Change("review", "rejected", "reject_review", "config", request_id, rule="delete_document", reason=why)
        await self.ledger.write(lambda db: move(db, bank, statuses.get("review", []), change))
        return True
