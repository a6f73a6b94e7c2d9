"""The self-hosted store as a :class:`~memwarden.backends.base.MemoryBackend`, called directly.

Governance's calls (the config guard's snapshots and rollbacks, review, archive and restore,
reports) reach :class:`LocalStore`'s methods without HTTP; a refusal is the
:class:`~memwarden.backends.base.BackendRejected` the store's Hindsight app would answer (same
status, same body), a failure of the database a
:class:`~memwarden.backends.base.BackendUnavailable`. The store's Hindsight-compatible app
(``fronts/hindsight/store_app.py``) stays for Hindsight clients, the pass-through of the routes
memwarden does not govern, and the contract tests.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter

from memwarden.backends.base import (
    CONFIG_GUARD,
    DOCUMENTS,
    JSON,
    OPERATIONS,
    TAG_GROUPS,
    BackendHealth,
    BackendRejected,
    BackendUnavailable,
)
from memwarden.policies.pipeline import extract_text
from memwarden.store.errors import StoreError, storage_failure
from memwarden.store.local import LocalStore
from memwarden.store.shapes import API_VERSION, FEATURES
from memwarden.store.writes import RetainItem

T = TypeVar("T")
# ``async`` read as Hindsight's request model reads it (lax: "false", "0", "no" are False), which the
# front has checked already.
_ASYNC = TypeAdapter(bool)


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


def _listing(params: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """A listing's parameters as the store's app passes them: paging with Hindsight's defaults,
    the tag filter, and ``keys`` (absent: None)."""
    tags = params.get("tags") or []
    return {
        **{key: params.get(key) for key in keys},
        "limit": int(params.get("limit", 100)),
        "offset": int(params.get("offset", 0)),
        "tags": [tags] if isinstance(tags, str) else list(tags),
        "tags_match": params.get("tags_match"),
    }


class LocalBackend:
    """The self-hosted store behind the backend protocol. No raw pass-through: the routes
    memwarden does not govern go to the store's Hindsight app."""

    kind = "local"
    capabilities = frozenset({CONFIG_GUARD, DOCUMENTS, TAG_GROUPS, OPERATIONS})

    def __init__(self, store: LocalStore) -> None:
        self.store = store

    async def health(self) -> BackendHealth:
        start = time.perf_counter()
        try:
            await self.store.list_banks(None, 1, 0)  # the database answers
        except Exception as exc:  # the report says what failed; it never raises
            return BackendHealth(kind=self.kind, healthy=False, detail=f"the store failed: {exc}")
        latency = (time.perf_counter() - start) * 1000
        return BackendHealth(kind=self.kind, healthy=True, detail="healthy", latency_ms=latency, version=API_VERSION)

    async def version(self) -> JSON:
        return {"api_version": API_VERSION, "features": dict(FEATURES)}

    async def retain(self, bank_id: str, request: JSON) -> JSON:
        items = [
            RetainItem(
                content=extract_text(item["content"])[0],
                document_id=item.get("document_id"),
                tags=list(item.get("tags") or []),
                context=item.get("context"),
                metadata=dict(item["metadata"]) if item.get("metadata") else None,
                timestamp=item.get("timestamp"),
            )
            for item in request["items"]
        ]
        document_tags = list(request.get("document_tags") or [])
        return await _called(
            self.store.retain_request(
                bank_id, items, document_tags, is_async=_ASYNC.validate_python(request.get("async", False))
            )
        )

    async def recall(self, bank_id: str, request: JSON) -> JSON:
        return await _called(self.store.recall(bank_id, request))

    async def list_memories(self, bank_id: str, params: Mapping[str, Any]) -> JSON:
        return await _called(self.store.list_units(bank_id, _listing(params, "type", "q", "document_id", "state")))

    async def list_documents(self, bank_id: str, params: Mapping[str, Any]) -> JSON:
        return await _called(self.store.list_documents(bank_id, _listing(params, "q")))

    async def get_memory(self, bank_id: str, memory_id: str) -> JSON:
        return await _called(self.store.get_unit(bank_id, memory_id))

    async def update_memory(self, bank_id: str, memory_id: str, changes: JSON) -> JSON:
        return await _called(self.store.update_unit(bank_id, memory_id, changes))

    async def delete_document(self, bank_id: str, document_id: str) -> JSON:
        return await _called(self.store.delete_document(bank_id, document_id))

    async def get_config(self, bank_id: str) -> JSON:
        return await _called(self.store.get_config(bank_id))

    async def patch_config(self, bank_id: str, updates: JSON) -> JSON:
        return await _called(self.store.patch_config(bank_id, updates))

    async def delete_config(self, bank_id: str) -> JSON:
        return await _called(self.store.reset_config(bank_id))

    async def stats(self, bank_id: str, *, refresh: bool = False) -> JSON:
        return await _called(self.store.stats(bank_id))  # never cached here: always fresh
