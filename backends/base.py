"""The one small interface every memory backend implements.

memwarden speaks Hindsight's HTTP API at its front, so Hindsight's JSON shapes are the lingua
franca: a backend takes and returns Hindsight-shaped dicts and translates to its vendor's API
inside. Backends translate and do nothing else: retries, circuit breaking and metrics wrap a
backend (see ``backends/retrying.py``), they are not written into each adapter. Adapters receive
their ``httpx.AsyncClient``; they never create one.

Exceptions::

    BackendError
    ├── BackendUnavailable      can't reach it, timed out, 5xx, 429 — worth retrying later
    │   └── BackendTimeout      it did not answer in time
    └── BackendRejected         it answered 4xx — the request itself is wrong
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memwarden.backends.transport import Body, RawResponse

JSON = dict[str, Any]

# What a backend can do beyond the calls every backend answers, declared by each (``capabilities``):
CONFIG_GUARD = "config_guard"  # per-bank config with get/patch/reset, and stats: snapshots and rollback
DOCUMENTS = "documents"  # items grouped by document id, listed and deleted by it: archive, restore
TAG_GROUPS = "tag_groups"  # Hindsight's tag filters (tags_match modes, tag_groups trees) on reads
OPERATIONS = "operations"  # asynchronous retains with an operation id to poll
RAW_PASSTHROUGH = "raw_passthrough"  # speaks the front's HTTP dialect: a client's request goes as sent


class BackendError(Exception):
    """Base of every error a backend raises."""


class BackendUnavailable(BackendError):
    """The backend could not be reached or failed on its side (retryable)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class BackendTimeout(BackendUnavailable):
    """The backend did not answer within the configured timeout."""


class BackendRejected(BackendError):
    """The backend answered with a 4xx; ``body`` is its error body, passed on to the client as is."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"backend rejected the request with {status}")
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class BackendHealth:
    """What ``/warden/health`` reports about the backend."""

    kind: str
    healthy: bool
    detail: str
    latency_ms: float | None = None
    version: str | None = None
    extra: JSON = field(default_factory=dict)


@runtime_checkable
class MemoryBackend(Protocol):
    """A store of memories that speaks (or is translated to) Hindsight's shapes.

    Called by the governed routes of ``proxy/``. Each method is one backend call; it raises
    :class:`BackendUnavailable` or :class:`BackendRejected` and never returns an error body.
    """

    kind: str
    capabilities: frozenset[str]  # of CONFIG_GUARD, DOCUMENTS, TAG_GROUPS, OPERATIONS, RAW_PASSTHROUGH

    async def health(self) -> BackendHealth: ...

    async def version(self) -> JSON: ...

    async def retain(self, bank_id: str, request: JSON) -> JSON: ...

    async def recall(self, bank_id: str, request: JSON) -> JSON: ...

    async def list_memories(self, bank_id: str, params: Mapping[str, Any]) -> JSON: ...

    async def list_documents(self, bank_id: str, params: Mapping[str, Any]) -> JSON: ...

    async def get_memory(self, bank_id: str, memory_id: str) -> JSON: ...

    async def update_memory(self, bank_id: str, memory_id: str, changes: JSON) -> JSON: ...

    async def delete_document(self, bank_id: str, document_id: str) -> JSON: ...

    async def get_config(self, bank_id: str) -> JSON: ...

    async def patch_config(self, bank_id: str, updates: JSON) -> JSON: ...

    async def delete_config(self, bank_id: str) -> JSON: ...

    async def stats(self, bank_id: str, *, refresh: bool = False) -> JSON: ...


@runtime_checkable
class PassThrough(Protocol):
    """The raw half of a backend that speaks the front's own HTTP dialect: a client's request sent
    as is, its answer streamed back untouched. memwarden passes every route it does not govern
    through it (and, until the governed routes reach the backend through :class:`MemoryBackend`
    alone, the forwarding of governed retains and reads). Implemented by ``HindsightBackend``,
    over the network or over the self-hosted store's Hindsight app in process."""

    kind: str

    async def send_raw(
        self, method: str, target: str, headers: Iterable[tuple[str, str]], content: Body
    ) -> RawResponse: ...

    async def health(self) -> BackendHealth: ...
