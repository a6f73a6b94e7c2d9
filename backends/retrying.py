"""``RetryingBackend``: retries the idempotent reads of any backend, wrapping it.

Reads (``recall``, ``list_memories``, ``list_documents``, ``get_config``, ``stats``) are
retried on :class:`~backends.base.BackendUnavailable` — a connection that failed, 429, 5xx —
honouring the backend's ``Retry-After`` up to ``max_wait``. So is ``set_memory_state``: it sets a
fact's state outright (valid or invalidated), so sent twice it leaves what sent once does — and
the real Hindsight answers 500 "deadlock detected" when its own graph maintenance holds the same
bank's rows, which a second attempt gets past. Other writes are never retried here: a write that
may or may not have landed is the outbox's business (write governance), not a blind resend's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from memwarden.backends.base import BackendHealth, BackendUnavailable, MemoryBackend, Purging
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

T = TypeVar("T")


class RetryingBackend:
    """Wraps ``inner``; same interface. ``retries`` extra attempts for reads and state changes (0 disables)."""

    def __init__(self, inner: MemoryBackend, *, retries: int = 2, base_wait: float = 0.1, max_wait: float = 5.0):
        self.inner = inner
        self.kind = inner.kind
        self.capabilities = inner.capabilities
        self._retries = retries
        self._base_wait = base_wait
        self._max_wait = max_wait

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = exc.retry_after if isinstance(exc, BackendUnavailable) else None
        backoff = self._base_wait * (2 ** (state.attempt_number - 1))
        return min(self._max_wait, hint if hint is not None else backoff)

    async def _idempotent(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call`` attempted until it succeeds, up to ``retries`` more times: an idempotent call only."""
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(BackendUnavailable),
            stop=stop_after_attempt(1 + self._retries),
            wait=self._wait,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await call()
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover

    async def health(self) -> BackendHealth:
        return await self.inner.health()  # a probe reports what it sees, once

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        return await self._idempotent(lambda: self.inner.recall(bank_id, query))

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]:
        return await self._idempotent(lambda: self.inner.list_memories(bank_id, query))

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        return await self._idempotent(lambda: self.inner.get_memory(bank_id, memory_id))

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]:
        return await self._idempotent(lambda: self.inner.list_documents(bank_id, limit=limit, offset=offset))

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        return await self._idempotent(lambda: self.inner.held_documents(bank_id, document_ids))

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        return await self._idempotent(lambda: self.inner.get_document(bank_id, document_id))

    async def get_config(self, bank_id: str) -> BankConfig:
        return await self._idempotent(lambda: self.inner.get_config(bank_id))

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats:
        return await self._idempotent(lambda: self.inner.stats(bank_id, refresh=refresh))

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        return await self.inner.retain(bank_id, items, document_tags=document_tags, wait=wait)

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        await self._idempotent(lambda: self.inner.set_memory_state(bank_id, memory_id, state, reason=reason))

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        await self.inner.delete_document(bank_id, document_id)

    async def purge(self) -> None:
        """The inner backend's, when it has one (the self-hosted store); nothing otherwise."""
        if isinstance(self.inner, Purging):
            await self.inner.purge()

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        return await self.inner.patch_config(bank_id, updates)

    async def reset_config(self, bank_id: str) -> BankConfig:
        return await self.inner.reset_config(bank_id)
