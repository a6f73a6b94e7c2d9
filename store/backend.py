"""The self-hosted store as a :class:`~memwarden.backends.base.MemoryBackend`, called directly.

The store speaks Hindsight's shapes, so the neutral values are read and written with
``backends/hindsight_json.py``, as the Hindsight backend does.

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

from memwarden.backends import hindsight_json as hj
from memwarden.backends.base import (
    CONFIG_GUARD,
    DOCUMENTS,
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
from memwarden.store.attachments import content_of
from memwarden.store.errors import StoreError, storage_failure
from memwarden.store.local import LocalStore
from memwarden.store.shapes import API_VERSION
from memwarden.store.writes import RetainItem

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


def _stored(n: int, item: Item) -> RetainItem:
    """An item as the store writes it: its blocks' attachments kept (``store.attachments``)."""
    blocks = item.extra.get("content")
    content = content_of(blocks, f"items[{n}]") if isinstance(blocks, list) else None
    return RetainItem(
        content=content.text if content else item.content,
        shown=content.shown if content and content.shown != content.text else None,
        attachments=content.attachments if content else (),
        document_id=item.document_id,
        tags=list(item.tags),
        context=item.context,
        metadata=dict(item.metadata) if item.metadata else None,
        timestamp=item.timestamp,
        vector=item.vector,
        entities=entity_names(item.extra.get("entities")),
    )


def entity_names(given: Any) -> list[str]:
    """The names of a Hindsight item's ``entities`` (``[{"text", "type"?}]``, checked by the front's
    ``MemoryItem``; anything else in a recorded item is left out)."""
    if not isinstance(given, list):
        return []
    return [e["text"] for e in given if isinstance(e, dict) and isinstance(e.get("text"), str)]


def _rejected(exc: StoreError) -> BackendRejected | BackendUnavailable:
    if exc.status >= 500:
        return BackendUnavailable(str(exc.detail), status=exc.status)
    return BackendRejected(exc.status, {"detail": exc.detail})


class LocalBackend:
    """The self-hosted store behind the backend protocol. No raw pass-through: the routes
    memwarden does not govern go to the store's Hindsight app."""

    kind = "local"
    capabilities = frozenset({CONFIG_GUARD, DOCUMENTS, TAG_GROUPS, OPERATIONS, SELF_HOSTED})

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
        try:
            stored = [_stored(n, item) for n, item in enumerate(items)]
        except StoreError as exc:  # an attachment that is not base64: Hindsight's 400
            raise _rejected(exc) from None
        answer = await _called(self.store.retain_request(bank_id, stored, list(document_tags), is_async=not wait))
        return hj.receipt_from_json(answer)

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        return await _called(self.store.recall(bank_id, hj.recall_json(query)))

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]:
        params = {
            "type": None,
            "q": None,
            "document_id": query.document_id,
            "state": query.state,
            "limit": query.limit,
            "offset": query.offset,
            "tags": list(query.tags.tags),
            "tags_match": query.tags.match,
        }
        return hj.page_from_json(await _called(self.store.list_units(bank_id, params)), hj.listed_memory)

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]:
        params: dict[str, Any] = {"q": None, "limit": limit, "offset": offset, "tags": [], "tags_match": None}
        return hj.page_from_json(await _called(self.store.list_documents(bank_id, params)), hj.document_from_json)

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        return hj.listed_memory(await _called(self.store.get_unit(bank_id, memory_id)))

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        changes: dict[str, Any] = {"state": state}
        if reason is not None:
            changes["reason"] = reason
        await _called(self.store.update_unit(bank_id, memory_id, changes))

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        await _called(self.store.delete_document(bank_id, document_id))

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        return hj.document_from_json(await _called(self.store.get_document(bank_id, document_id)))

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        return await _called(self.store.held_documents(bank_id, document_ids))

    async def purge(self) -> None:
        await _called(self.store.purge())

    async def get_config(self, bank_id: str) -> BankConfig:
        return hj.config_from_json(await _called(self.store.get_config(bank_id)))

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        return hj.config_from_json(await _called(self.store.patch_config(bank_id, updates)))

    async def reset_config(self, bank_id: str) -> BankConfig:
        return hj.config_from_json(await _called(self.store.reset_config(bank_id)))

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats:
        return hj.stats_from_json(await _called(self.store.stats(bank_id)))  # never cached here: always fresh

    # -- SelfHosted: what only this store answers. Its own errors pass through (StoreError with
    # Hindsight's status and detail, TagFilterError, EmbedderError): the admin routes answer them.

    async def index_counts(self, bank_id: str) -> dict[str, Any]:
        return await self.store.index_counts(bank_id)

    async def add_feedback(self, bank_id: str, document_id: str, score: int) -> list[str]:
        return await self.store.add_feedback(bank_id, document_id, score)

    async def reembed(self, bank_id: str) -> dict[str, Any]:
        return await self.store.reembed(bank_id)

    async def explain(self, bank_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        recalled = await self.store.recall(bank_id, body, explain=True)
        return {"backend": "local", **recalled.extra["explain"]}
