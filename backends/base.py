"""The one small interface every memory backend implements.

A backend takes and returns the neutral values of ``backends/types.py`` and translates them to its
vendor's API inside (``backends/hindsight_json.py`` for Hindsight's); what it can do beyond the
calls every backend answers it declares in ``capabilities``. Backends translate and do nothing
else: retries, circuit breaking and metrics wrap a backend (see ``backends/retrying.py``), they
are not written into each adapter. Adapters receive their ``httpx.AsyncClient``; they never
create one.

Exceptions::

    BackendError
    ├── BackendUnavailable      can't reach it, timed out, 5xx, 429 — worth retrying later
    │   └── BackendTimeout      it did not answer in time
    └── BackendRejected         it answered 4xx — the request itself is wrong
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memwarden.backends.transport import Body, RawResponse
from memwarden.backends.types import (
    JSON,
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

# What a backend can do beyond the calls every backend answers, declared by each (``capabilities``):
CONFIG_GUARD = "config_guard"  # per-bank config with get/patch/reset, and stats: snapshots and rollback
DOCUMENTS = "documents"  # items grouped by document id, listed and deleted by it: archive, restore
TAG_GROUPS = "tag_groups"  # Hindsight's tag filters (tags_match modes, tag_groups trees) on reads
OPERATIONS = "operations"  # asynchronous retains with an operation id to poll
RAW_PASSTHROUGH = "raw_passthrough"  # speaks the front's HTTP dialect: a client's request goes as sent
MEMORY_STATES = "memory_states"  # memories invalidated and made valid again: archive keeps them in the backend
SELF_HOSTED = "self_hosted"  # memwarden's own store: the calls of SelfHosted; it audits its own imports


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


@runtime_checkable
class Purging(Protocol):
    """A backend that can make what it deleted unrecoverable on demand — its indexes rewritten, its
    files' old copies overwritten — called once after an erasure (the self-hosted store; a remote
    backend's disks are its own)."""

    async def purge(self) -> None: ...


@runtime_checkable
class SelfHosted(Protocol):
    """What only memwarden's own store answers (capability ``SELF_HOSTED``): its index counts,
    ranking feedback, re-embedding with a new embedder and a white-box recall. Reach it with
    :func:`self_hosted`; a remote backend has none of it. Not a neutral seam: it is the store's
    own, in its terms — ``explain`` takes a Hindsight recall body — and its calls raise the store's
    errors (``memwarden.store.errors.StoreError`` with Hindsight's status and detail,
    ``policies.tagfilter.TagFilterError``, ``store.embedder.EmbedderError``), which the admin routes
    that call it answer."""

    async def index_counts(self, bank_id: str, *, fulltext: bool = True) -> dict[str, Any]:
        """Rows, vectors and full-text entries of ``bank_id`` (``""``: every bank's, as ``all_banks_rows``);
        ``fulltext=False`` leaves out the full-text check (a scan of the index on PostgreSQL)."""
        ...

    async def add_feedback(self, bank_id: str, document_id: str, score: int) -> list[str]:
        """An operator's vote on a document's facts (they rank a little higher or lower); their ids."""
        ...

    async def reembed(self, bank_id: str) -> dict[str, Any]:
        """Embed every memory of ``bank_id`` again with the configured embedder (resumable)."""
        ...

    async def explain(self, bank_id: str, query: RecallQuery) -> dict[str, Any]:
        """A recall of ``query`` with every candidate, its ranks and scores."""
        ...


def self_hosted(backend: object) -> SelfHosted | None:
    """``backend`` — or the backend it wraps (``inner``: retries) — as :class:`SelfHosted` when it
    is memwarden's own store; None in front of any other. The one way a layer above reaches the
    store's own calls (there is no second handle on the store)."""
    seen: object | None = backend
    while seen is not None:
        if isinstance(seen, SelfHosted):
            return seen
        seen = getattr(seen, "inner", None)
    return None


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
    """A store of memories, in neutral types.

    Called by governance. Each method is one backend call; it raises :class:`BackendUnavailable`
    or :class:`BackendRejected` (404: no such bank, memory or document) and never returns an error
    body. The config and stats calls are those of ``CONFIG_GUARD``, the document calls those of
    ``DOCUMENTS``; a backend without the capability raises ``BackendRejected(501, …)`` there.
    """

    kind: str
    capabilities: frozenset[str]  # of the capability names above

    async def health(self) -> BackendHealth: ...

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        """Store ``items``; ``wait`` False lets a backend with ``OPERATIONS`` queue them."""
        ...

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled: ...

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]: ...

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]: ...

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        """One memory by its id, with its document and state."""
        ...

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        """``valid`` or ``invalidated`` (with why): a memory taken out of recall and put back."""
        ...

    async def delete_document(self, bank_id: str, document_id: str) -> None: ...

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        """Which of ``document_ids`` the backend holds in the bank (none, for a bank it lacks)."""
        ...

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        """One document with what re-creates it (``extra``: Hindsight's ``original_text``,
        ``retain_params``, ``document_metadata``, ``created_at``); BackendRejected 404 without it."""
        ...

    async def get_config(self, bank_id: str) -> BankConfig: ...

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig: ...

    async def reset_config(self, bank_id: str) -> BankConfig: ...

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats: ...


@runtime_checkable
class PassThrough(Protocol):
    """The raw half of a backend that speaks the front's own HTTP dialect: a client's request sent
    as is, its answer streamed back untouched. memwarden passes every route it does not govern
    through it, and the governed retains and reads of a client speaking that dialect go through it
    too, with the client's own headers, so the backend's answer reaches the client as it gave it.
    Implemented by ``HindsightBackend``,
    over the network or over the self-hosted store's Hindsight app in process."""

    kind: str

    async def send_raw(
        self, method: str, target: str, headers: Iterable[tuple[str, str]], content: Body
    ) -> RawResponse: ...

    async def health(self) -> BackendHealth: ...
