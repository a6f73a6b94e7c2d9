"""The self-hosted store: memwarden as the memory server, answering Hindsight's API from its own
database (:mod:`memwarden.store.server.app` serves it over HTTP).

All rows live in the ledger's database (one store, one writer thread: :class:`memwarden.db.database.Database`);
reads run on the ledger's reader threads, embedding and vector search on worker threads, never on
the event loop. Vectors are kept in memory per bank for exact search (a float32 matrix, built from
the BLOBs on first use) and appended to as memories arrive.

:class:`LocalStore` is the facade the rest of memwarden calls; the work is done by one module per
concern: :mod:`store.banks` (banks and their config), :mod:`store.writes` (retain),
:mod:`store.operations` (async retains), :mod:`store.index_cache` (the vector indexes),
:mod:`store.recall` with :mod:`store.keyword`, :mod:`store.fusion` and :mod:`store.explain`,
:mod:`store.feedback`, :mod:`store.reembed`, :mod:`store.units`, :mod:`store.documents` (and
their chunks), :mod:`store.entities` and :mod:`store.stats`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal

from memwarden import __version__
from memwarden.backends.types import (
    BankConfig,
    BankStats,
    Document,
    Item,
    Memory,
    MemoryQuery,
    Page,
    Recalled,
    RecallQuery,
    Receipt,
    TagFilter,
)
from memwarden.db.database import Database
from memwarden.store import (
    attachments,
    banks,
    documents,
    entities,
    pg_vectors,
    recall,
    reembed,
    shapes,
    stats,
    transfer,
    transfer_import,
    units,
    writes,
)
from memwarden.store.archive import Scope
from memwarden.store.archive_read import Archive
from memwarden.store.embedder import Embedder
from memwarden.store.errors import StoreError
from memwarden.store.feedback import Feedback
from memwarden.store.index_cache import IndexCache
from memwarden.store.keyword import TermStats
from memwarden.store.operations import Operations
from memwarden.store.pg_vectors import PgBankIndex
from memwarden.store.schema import STORE_MIGRATIONS
from memwarden.store.vectors import BankIndex
from memwarden.store.writes import RetainItem

__all__ = ["LocalStore", "RetainItem", "StoreError"]


class LocalStore:
    def __init__(self, ledger: Database, embedder: Embedder, *, ann_threshold: int = 20_000) -> None:
        ledger.migrate_sync(STORE_MIGRATIONS)  # the store's own tables, in the shared database
        self.ledger = ledger
        self.embedder = embedder
        self.ann_threshold = ann_threshold
        self._indexes = IndexCache(ledger, embedder, ann_threshold=ann_threshold)
        if ledger.url is not None:  # PostgreSQL: the embedder's HNSW index (store/pg_vectors.py)
            self._indexes.iterative = ledger.read_sync(pg_vectors.iterative_scans)
            if embedder.dim:  # (an OpenAI-compatible one learns its width at its first write: made then)
                ledger.write_sync(partial(pg_vectors.ensure_index, embedder=embedder.name, dim=embedder.dim))
                self._indexes.indexed.add((embedder.name, embedder.dim))
        self._terms = TermStats()
        self._feedback = Feedback(ledger)
        # The retain an operation runs, without a reference back to the store (a bound method would
        # keep a dropped store, and its embedding model, alive until the cycle collector runs).
        self._operations = Operations(ledger, partial(writes.retain, ledger, embedder, self._indexes))

    # -- banks ----------------------------------------------------------------------------

    async def bank_row(self, bank: str) -> sqlite3.Row | None:
        return await banks.bank_row(self.ledger, bank)

    async def require_bank(self, bank: str) -> sqlite3.Row:
        return await banks.require_bank(self.ledger, bank)

    @staticmethod
    def profile(row: sqlite3.Row) -> dict[str, Any]:
        return banks.profile(row)

    async def put_bank(self, bank: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Create or update a bank (``PUT``/``PATCH`` a bank): profile fields, and the flat config subset."""
        return await banks.put_bank(self.ledger, bank, fields)

    async def ping(self) -> None:
        """The database answers a read (what a health check asks: not a count over every memory)."""
        await self.ledger.read(lambda db: db.execute("SELECT 1").fetchone())

    async def list_banks(self, q: str | None, limit: int, offset: int) -> dict[str, Any]:
        return await banks.list_banks(self.ledger, q, limit, offset)

    async def delete_bank(self, bank: str) -> dict[str, Any]:
        answer = await banks.delete_bank(self.ledger, bank)
        self._feedback.forget(bank)
        self._indexes.forget(bank)
        return answer

    async def get_config(self, bank: str) -> BankConfig:
        return await banks.get_config(self.ledger, bank)

    async def patch_config(self, bank: str, updates: Mapping[str, Any]) -> BankConfig:
        return await banks.patch_config(self.ledger, bank, updates)

    async def reset_config(self, bank: str) -> BankConfig:
        return await banks.reset_config(self.ledger, bank)

    # -- retain, and async retains ---------------------------------------------------------

    async def retain(self, bank: str, items: Sequence[RetainItem], document_tags: Sequence[str] = ()) -> int:
        """Store ``items`` (one memory each) atomically; a document id already present is replaced."""
        await writes.retain(self.ledger, self.embedder, self._indexes, bank, items, document_tags)
        return len(items)

    async def retain_request(
        self, bank: str, given: Sequence[Item], document_tags: Sequence[str], *, wait: bool
    ) -> Receipt:
        """A retain request, as Hindsight acts on it: written before the answer when ``wait``, else
        queued as an operation (its id in the receipt)."""
        items = [writes.stored(n, item) for n, item in enumerate(given)]
        if not wait:
            # Queued as JSON: an item's vector is not kept (the worker embeds it when it writes).
            payload = {
                "items": [writes.queued(i) for i in items],
                "document_tags": list(document_tags),
            }
            operation_id = await self.submit(bank, payload, len(items))
            return shapes.retained(len(items), operation_id=operation_id)
        await self.retain(bank, items, document_tags)
        return shapes.retained(len(items), operation_id=None)

    async def submit(self, bank: str, payload: dict[str, Any], items_count: int) -> str:
        """Acknowledge an async retain once its payload is committed; it is worked off in the background."""
        return await self._operations.submit(bank, payload, items_count)

    async def held_documents(self, bank: str, document_ids: Sequence[str]) -> set[str]:
        """Which of ``document_ids`` the store holds in ``bank``: written, or in an async retain it
        acknowledged and has not finished yet."""
        return await self._operations.held_documents(bank, document_ids)

    async def resume(self) -> int:
        """Work off the async retains a previous process acknowledged but did not finish."""
        return await self._operations.resume()

    async def drain(self, grace: float = 10.0) -> None:
        await self._operations.drain(grace)

    async def operation(self, bank: str, operation_id: str) -> dict[str, Any]:
        """An async retain's status, as Hindsight answers it (a transfer's with its result)."""
        answer = await self._operations.status(bank, operation_id)
        if answer["operation_type"] in transfer.TRANSFER_TYPES:
            answer["result_metadata"] = await transfer.result_metadata(self.ledger, operation_id)
        return answer

    # -- transfer: a bank exported and imported in Hindsight's archive -----------------------

    async def export_bank(
        self, bank: str, *, archive_type: Literal["documents", "bank"], scope: Scope, document_ids: Sequence[str] | None
    ) -> str:
        """Export ``bank`` (:func:`store.transfer.export`); the finished operation's id."""
        return await transfer.export(
            self.ledger, bank, archive_type=archive_type, scope=scope, document_ids=document_ids, version=__version__
        )

    async def import_archive(self, request: transfer_import.ImportRequest, archive: Archive) -> str:
        """Import a checked archive, all or nothing (:func:`store.transfer_import.import_archive`)."""
        return await transfer_import.import_archive(
            self.ledger, self.embedder, self._indexes, self._feedback, request, archive
        )

    async def download(self, key: str) -> tuple[str, bytes] | None:
        """An export's archive by its storage key: (bank, bytes), None if there is none."""
        return await transfer.download(self.ledger, key)

    async def list_operations(self, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return await self._operations.list_operations(bank, params)

    async def document_history(self, bank: str, document_id: str, limit: int, offset: int) -> dict[str, Any]:
        """What the async retains did to a document, newest first (a synchronous retain is not in it)."""
        return await self._operations.document_history(bank, document_id, limit, offset)

    # -- recall, feedback, re-embed ---------------------------------------------------------

    async def _index(self, bank: str) -> BankIndex | PgBankIndex:
        """The bank's vector index, loaded on first use (``bench/local_store.py`` waits on its graph)."""
        return await self._indexes.get(bank)

    async def recall(
        self,
        bank: str,
        request: RecallQuery,
        *,
        arms: tuple[str, ...] = ("semantic", "keyword"),
        explain: bool = False,
    ) -> Recalled:
        """Hybrid recall (:func:`store.recall.recall`); ``arms`` selects the retrievers, ``explain``
        adds the white-box account (``extra["explain"]``)."""
        return await recall.recall(
            self.ledger,
            self.embedder,
            self._indexes,
            self._feedback,
            self._terms,
            bank,
            request,
            arms=arms,
            explain=explain,
        )

    async def add_feedback(self, bank: str, document_id: str, score: int) -> list[str]:
        """Add ``score`` to the net votes of a document's facts (they rank a little higher or
        lower in recall); the facts' ids."""
        return await self._feedback.add(bank, document_id, score)

    async def reembed(self, bank: str, *, batch: int = 256) -> dict[str, Any]:
        """Embed every memory of ``bank`` with the current embedder and record it as the bank's
        (:func:`store.reembed.reembed`)."""
        return await reembed.reembed(self.ledger, self.embedder, self._indexes, bank, batch=batch)

    # -- memories ---------------------------------------------------------------------------

    async def list_units(
        self, bank: str, query: MemoryQuery, *, kind: str | None = None, contains: str | None = None
    ) -> Page[Memory]:
        """A page of memories (:func:`store.units.list_units`)."""
        return await units.list_units(self.ledger, bank, query, kind=kind, contains=contains)

    async def get_unit(self, bank: str, memory_id: str) -> Memory:
        """A memory, archived ones included (``state`` says which), Hindsight's detail fields in its ``extra``."""
        return await units.get_unit(self.ledger, bank, memory_id)

    async def update_unit(self, bank: str, memory_id: str, changes: Mapping[str, Any]) -> Memory:
        """``PATCH`` a memory: edit, archive or restore it, audited (:func:`store.units.update_unit`)."""
        return await units.update_unit(self.ledger, self.embedder, self._indexes, bank, memory_id, changes)

    async def history(self, bank: str, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes, from the audit log (oldest first)."""
        return await units.history(self.ledger, bank, memory_id)

    async def unit_history(self, bank: str, memory_id: str) -> list[dict[str, Any]]:
        return await units.unit_history(self.ledger, bank, memory_id)

    async def delete_units(self, bank: str, fact_type: str | None) -> dict[str, Any]:
        return await units.delete_units(self.ledger, self._indexes, bank, fact_type)

    # -- documents, tags, stats -------------------------------------------------------------

    async def list_documents(
        self, bank: str, *, limit: int, offset: int, q: str | None = None, tags: TagFilter | None = None
    ) -> Page[Document]:
        return await documents.list_documents(self.ledger, bank, limit=limit, offset=offset, q=q, tags=tags)

    async def get_document(self, bank: str, document_id: str) -> Document:
        return await documents.get_document(self.ledger, bank, document_id)

    async def update_document_tags(self, bank: str, document_id: str, tags: Sequence[str]) -> dict[str, Any]:
        return await documents.update_document_tags(self.ledger, bank, document_id, tags)

    async def delete_document(self, bank: str, document_id: str) -> dict[str, Any]:
        return await documents.delete_document(self.ledger, self._indexes, bank, document_id)

    async def purge(self) -> None:
        """Make what was deleted unrecoverable from the store's index: the full-text index rewritten
        (after an erasure; the caller then checkpoints the database's write-ahead log)."""
        await self.ledger.write(documents.purge_index)

    async def get_attachment(self, bank: str, attachment_id: str) -> tuple[str, bytes]:
        """An attachment's media type and bytes; 404 when the bank holds none by that id (a bank
        that does not exist included, as Hindsight: nothing to probe)."""
        found = await self.ledger.read(lambda db: attachments.read(db, bank, attachment_id))
        if found is None:
            raise StoreError(404, "Attachment not found")
        return found

    async def list_chunks(self, bank: str, document_id: str, limit: int, offset: int) -> dict[str, Any]:
        return await documents.list_chunks(self.ledger, bank, document_id, limit, offset)

    async def get_chunk(self, chunk_id: str) -> dict[str, Any]:
        return await documents.get_chunk(self.ledger, chunk_id)

    async def list_entities(self, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return await entities.list_entities(self.ledger, bank, params)

    async def get_entity(self, bank: str, entity_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return await entities.get_entity(self.ledger, bank, entity_id, params)

    async def tags(self, bank: str, q: str | None, limit: int, offset: int) -> dict[str, Any]:
        return await stats.tags(self.ledger, bank, q, limit, offset)

    async def stats(self, bank: str) -> BankStats:
        return await stats.stats(self.ledger, bank)

    async def index_counts(self, bank: str, *, fulltext: bool = True) -> dict[str, Any]:
        return await stats.index_counts(self.ledger, self.embedder.name, bank, fulltext=fulltext)
