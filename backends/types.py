"""The neutral values a backend takes and returns, whatever API its vendor speaks.

Each type holds the fields governance reasons about under memwarden's own names, plus ``extra``:
the fields of the dialect the value came from (a Hindsight content block list, a recall hit's
scores, a Mem0 memory's categories), kept so that a front speaking the same dialect as the backend
loses nothing, and ignored by everyone else. ``backends/hindsight_json.py`` reads and writes
Hindsight's JSON; another dialect brings its own module beside it.

An :class:`Item` is also the form the ledger keeps a recorded memory in (``memories.item``), so a
rollback, a restore or an approval can send it again to any backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, TypeVar

from memwarden.policies.judgement import extract_text

JSON = dict[str, Any]
T = TypeVar("T")
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Item:
    """One memory to retain."""

    content: str  # the text (a dialect's richer content, such as blocks, is in ``extra``)
    context: str | None = None
    timestamp: str | None = None  # when it happened, ISO 8601
    document_id: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # The item's embedding, when memwarden's learned layer computed one with the backend's own
    # embedder (the self-hosted store): used instead of embedding the text again. Never serialized.
    vector: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Item:
        """An item from its JSON (the ledger's form, and Hindsight's ``MemoryItem``): content a
        string, or a list of blocks, whose text is the content and which stay in ``extra``."""
        content = obj.get("content")
        extra = {k: v for k, v in obj.items() if k not in _ITEM_FIELDS}
        if not isinstance(content, str):
            extra["content"] = content
        return cls(
            content=content if isinstance(content, str) else extract_text(content)[0],
            context=_str(obj.get("context")),
            timestamp=_str(obj.get("timestamp")),
            document_id=_str(obj.get("document_id")),
            tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags := obj.get("tags"), list) else (),
            metadata=metadata if isinstance(metadata := obj.get("metadata"), Mapping) else None,
            extra=extra,
        )

    def to_json(self) -> JSON:
        out: JSON = {"content": self.content, "tags": list(self.tags)}
        for key in ("context", "timestamp", "document_id"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.metadata is not None:
            out["metadata"] = dict(self.metadata)
        out.update(self.extra)
        return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_ITEM_FIELDS = frozenset({"content", "context", "timestamp", "document_id", "tags", "metadata"})


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a backend did with a retain: how many items it took, and the operation to poll when
    it queued them instead of storing them at once."""

    items: int
    operation_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TagFilter:
    """Which memories a read may return by their tags: ``tags`` with a ``match`` mode (``any``,
    ``all``, ``any_strict``, ``all_strict``, ``exact``), or a ``groups`` tree (backends with
    ``TAG_GROUPS``)."""

    tags: tuple[str, ...] = ()
    match: str | None = None
    groups: Any = None


@dataclass(frozen=True, slots=True)
class RecallQuery:
    text: str
    max_tokens: int | None = None  # the answer's size, in tokens of memory text
    kinds: tuple[str, ...] | None = None  # memory kinds (Hindsight's fact types); None: every kind
    tags: TagFilter = field(default_factory=TagFilter)
    budget: str | None = None  # how hard to search: low, mid, high
    trace: bool = False  # ask the backend to say how it ranked
    extra: Mapping[str, Any] = field(default_factory=dict)


class Memory(NamedTuple):
    """One memory as a backend holds it: a recall hit or a listed memory. A named tuple, not a
    frozen dataclass: as immutable, and built ~4x faster, which counts when a recall returns
    hundreds (``bench/local_store.py``'s end-to-end table)."""

    id: str
    text: str
    kind: str | None = None
    document_id: str | None = None
    context: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] | None = None
    mentioned_at: str | None = None
    occurred_start: str | None = None
    occurred_end: str | None = None
    state: str | None = None  # valid, invalidated (backends that curate)
    extra: Mapping[str, Any] = _EMPTY


@dataclass(frozen=True, slots=True)
class Recalled:
    """A recall's answer: the memories in rank order, the backend's trace when asked for, and its
    other answer fields in ``extra``."""

    memories: list[Memory]
    trace: JSON | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    tags: tuple[str, ...] = ()
    content_hash: str | None = None
    memory_count: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing; ``total`` when the backend counts (None: it does not say)."""

    items: Sequence[T]
    total: int | None = None


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """Which memories to list."""

    document_id: str | None = None
    state: str | None = None  # valid (the backend's default), invalidated
    tags: TagFilter = field(default_factory=TagFilter)
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True, slots=True)
class BankConfig:
    """A bank's settings: every value in force, and the ones set for this bank (its overrides)."""

    values: Mapping[str, Any]
    overrides: Mapping[str, Any]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BankStats:
    """What a bank holds, by memory kind (``world``, ``experience``, ``observation``) and
    ``documents``; ``pending``: work the backend has queued and not yet done (a bank with pending
    work is not settled). ``raw``: the backend's own account, kept in snapshots for the operator."""

    counts: Mapping[str, int]
    pending: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict)
