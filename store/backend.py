"""The self-hosted store as a :class:`~memwarden.backends.base.MemoryBackend`, called directly.

The store takes and answers the neutral values of ``backends/types.py`` (Hindsight's other
fields in their ``extra``), so this is a thin adapter: it turns the store's refusals into a
backend's.

Governance's calls (the config guard's snapshots and rollbacks, review, archive and restore,
reports) reach :class:`LocalStore`'s methods without HTTP; a refusal is the
:class:`~memwarden.backends.base.BackendRejected` the store's Hindsight app would answer (same
status, same body), a failure of the database a
:class:`~memwarden.backends.base.BackendUnavailable`. The store's Hindsight-compatible app
(``store/server/app.py``) stays for Hindsight clients, the pass-through of the routes
memwarden does not govern, and the contract tests.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

from memwarden.backends.base import (
    CONFIG_GUARD,
    DOCUMENTS,
    MEMORY_STATES,
    OPERATIONS,
    SELF_HOSTED,
    TAG_GROUPS,
    BackendHealth,
    BackendRejected,
    BackendUnavailable,
)
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
)
from memwarden.store.errors import StoreError, storage_failure
from memwarden.store.local import LocalStore
from memwarden.store.shapes import API_VERSION

T = TypeVar("T")


async def _called(work: Awaitable[T]) -> T:
    """``work``'s result; the store's refusals as a backend's."""
    try:
        return await work
    except StoreError as exc:
        raise _rejected(exc) from None
    except Exception as exc:
        failure = storage_failure(exc)
        if failure is None:
            raise
        raise BackendUnavailable(str(failure.detail), status=failure.status) from None


def _rejected(exc: StoreError) -> BackendRejected | BackendUnavailable:
    if exc.status >= 500:
        return BackendUnavailable(str(exc.detail), status=exc.status)
    return BackendRejected(exc.status, {"detail": exc.detail})


class LocalBackend:
    """The self-hosted store behind the backend protocol. No raw pass-through: the routes
    memwarden does not govern go to the store's Hindsight app."""

    kind = "local"
    capabilities = frozenset({CONFIG_GUARD, DOCUMENTS, MEMORY_STATES, TAG_GROUPS, OPERATIONS, SELF_HOSTED})

    def __init__(self, store: LocalStore) -> None:
        self.store = store

    async def health(self) -> BackendHealth:
        start = time.perf_counter()
        try:
            await self.store.ping()
        except Exception as exc:  # the report says what failed; it never raises
            return BackendHealth(kind=self.kind, healthy=False, detail=f"the store failed: {exc}")
        latency = (time.perf_counter() - start) * 1000
        return BackendHealth(kind=self.kind, healthy=True, detail="healthy", latency_ms=latency, version=API_VERSION)

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        return await _called(self.store.retain_request(bank_id, items, list(document_tags), wait=wait))

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        return await _called(self.store.recall(bank_id, query))

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]:
        return await _called(self.store.list_units(bank_id, query))

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]:
        return await _called(self.store.list_documents(bank_id, limit=limit, offset=offset))

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        return await _called(self.store.get_unit(bank_id, memory_id))

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        changes: dict[str, Any] = {"state": state}
        if reason is not None:
            changes["reason"] = reason
        await _called(self.store.update_unit(bank_id, memory_id, changes))

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        await _called(self.store.delete_document(bank_id, document_id))

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        return await _called(self.store.get_document(bank_id, document_id))

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        return await _called(self.store.held_documents(bank_id, document_ids))

    async def purge(self) -> None:
        await _called(self.store.purge())

    async def get_config(self, bank_id: str) -> BankConfig:
        return await _called(self.store.get_config(bank_id))

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        return await _called(self.store.patch_config(bank_id, updates))

    async def reset_config(self, bank_id: str) -> BankConfig:
        return await _called(self.store.reset_config(bank_id))

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats:
        return await _called(self.store.stats(bank_id))  # never cached here: always fresh

    # -- SelfHosted: what only this store answers. Its own errors pass through (StoreError with
    # Hindsight's status and detail, TagFilterError, EmbedderError): the admin routes answer them.

    async def index_counts(self, bank_id: str, *, fulltext: bool = True) -> dict[str, Any]:
        return await self.store.index_counts(bank_id, fulltext=fulltext)

    async def add_feedback(self, bank_id: str, document_id: str, score: int) -> list[str]:
        return await self.store.add_feedback(bank_id, document_id, score)

    async def reembed(self, bank_id: str) -> dict[str, Any]:
        return await self.store.reembed(bank_id)

    async def explain(self, bank_id: str, query: RecallQuery) -> dict[str, Any]:
        recalled = await self.store.recall(bank_id, query, explain=True)
        return {"backend": "local", **recalled.extra["explain"]}
