"""Hindsight's JSON ↔ the neutral values of ``backends/types.py``.

Read by the Hindsight backend (its answers) and by the Hindsight front and the self-hosted store's
Hindsight server (the requests they checked); written by both of those (their answers to clients).
Every reader keeps the fields it does not name in ``extra`` and every writer puts them back, so a
value read and written again is the JSON it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

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
    TagFilter,
)
from memwarden.policies.bank_config import WATCHABLE, watched_counts

T = TypeVar("T")

_MEMORY_FIELDS = (
    "id",
    "text",
    "document_id",
    "context",
    "tags",
    "metadata",
    "mentioned_at",
    "occurred_start",
    "occurred_end",
    "state",
)
_RESULT_NAMED = frozenset({*_MEMORY_FIELDS, "type"})
_LISTED_NAMED = frozenset({*_MEMORY_FIELDS, "fact_type"})
_PENDING = ("pending_operations", "pending_consolidation")


def _rest(obj: Mapping[str, Any], named: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in named}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _tags(value: Any) -> tuple[str, ...]:
    return tuple(t for t in value if isinstance(t, str)) if isinstance(value, list | tuple) else ()


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


# -- retains (an item's JSON is Hindsight's MemoryItem: ``Item.to_json``) --------------------------


def retain_json(items: list[Item], document_tags: tuple[str, ...] = (), *, wait: bool = True) -> JSON:
    body: JSON = {"items": [i.to_json() for i in items], "async": not wait}
    if document_tags:
        body["document_tags"] = list(document_tags)
    return body


def receipt_from_json(obj: Mapping[str, Any]) -> Receipt:
    count = obj.get("items_count")
    operation_id = _str(obj.get("operation_id"))
    # What receipt_json writes of itself (success, the bank, async when it follows from the
    # operation id) is left out of ``extra``; anything else, an unusual ``async`` included, is kept.
    derived = {"success": True, "async": operation_id is not None}
    return Receipt(
        items=count if isinstance(count, int) else 0,
        operation_id=operation_id,
        extra={
            k: v
            for k, v in obj.items()
            if k not in ("items_count", "operation_id", "bank_id") and not (k in derived and derived[k] == v)
        },
    )


def receipt_json(bank: str, receipt: Receipt) -> JSON:
    """Hindsight's ``RetainResponse``."""
    return {
        "success": True,
        "bank_id": bank,
        "async": receipt.operation_id is not None,
        **receipt.extra,
        "items_count": receipt.items,
        "operation_id": receipt.operation_id,
    }


# -- recall ---------------------------------------------------------------------------------------

_QUERY_FIELDS = ("query", "max_tokens", "types", "tags", "tags_match", "tag_groups", "budget", "trace")


def recall_query_from_json(body: Mapping[str, Any]) -> RecallQuery:
    """A ``RecallRequest`` already checked (by the Hindsight front, the store's Hindsight server, or
    built by the store's reflect): types as Hindsight's model has them."""
    types = body.get("types")
    max_tokens = body.get("max_tokens")
    return RecallQuery(
        text=str(body.get("query", "")),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        kinds=tuple(types) if isinstance(types, list) else None,
        tags=TagFilter(_tags(body.get("tags")), _str(body.get("tags_match")), body.get("tag_groups")),
        budget=_str(body.get("budget")),
        trace=bool(body.get("trace")),
        extra=_rest(body, _QUERY_FIELDS),
    )


def recall_json(query: RecallQuery) -> JSON:
    body: JSON = {"query": query.text}
    if query.max_tokens is not None:
        body["max_tokens"] = query.max_tokens
    if query.kinds is not None:
        body["types"] = list(query.kinds)
    if query.tags.tags:
        body["tags"] = list(query.tags.tags)
    if query.tags.match is not None:
        body["tags_match"] = query.tags.match
    if query.tags.groups is not None:
        body["tag_groups"] = query.tags.groups
    if query.budget is not None:
        body["budget"] = query.budget
    if query.trace:
        body["trace"] = True
    body.update(query.extra)
    return body


def memory_from_json(obj: Mapping[str, Any], kind_key: str = "type") -> Memory:
    """A recall result or one memory in detail (``kind_key`` "type"), or a listed memory
    ("fact_type"). On the path of every recall: plain lookups, one pass over the keys."""
    get = obj.get
    tags = get("tags")
    named = _RESULT_NAMED if kind_key == "type" else _LISTED_NAMED
    return Memory(
        str(get("id")),
        get("text") or "",
        get(kind_key),
        get("document_id"),
        get("context"),
        tuple(tags) if isinstance(tags, list) else (),
        get("metadata"),
        get("mentioned_at"),
        get("occurred_start"),
        get("occurred_end"),
        get("state"),
        {k: v for k, v in obj.items() if k not in named},
    )


def memory_json(memory: Memory, kind_key: str = "type") -> JSON:
    out: JSON = {
        "id": memory.id,
        "text": memory.text,
        kind_key: memory.kind,
        "context": memory.context,
        "occurred_start": memory.occurred_start,
        "occurred_end": memory.occurred_end,
        "mentioned_at": memory.mentioned_at,
        "document_id": memory.document_id,
        "metadata": memory.metadata,
        "tags": list(memory.tags),
    }
    if memory.state is not None:
        out["state"] = memory.state
    if memory.extra:
        out.update(memory.extra)
    return out


def recalled_from_json(obj: Mapping[str, Any]) -> Recalled:
    results = obj.get("results")
    trace = obj.get("trace")
    return Recalled(
        memories=[memory_from_json(r) for r in results if isinstance(r, Mapping)] if isinstance(results, list) else [],
        trace=trace if isinstance(trace, dict) else None,
        extra=_rest(obj, ("results", "trace")),
    )


def recalled_json(recalled: Recalled) -> JSON:
    """Hindsight's ``RecallResponse``."""
    return {"results": [memory_json(m) for m in recalled.memories], "trace": recalled.trace, **recalled.extra}


# -- listings -------------------------------------------------------------------------------------


def memory_query_params(query: MemoryQuery) -> JSON:
    """``GET …/memories/list``'s query parameters."""
    params: JSON = {"limit": query.limit, "offset": query.offset}
    if query.document_id is not None:
        params["document_id"] = query.document_id
    if query.state is not None:
        params["state"] = query.state
    if query.tags.tags:
        params["tags"] = list(query.tags.tags)
    if query.tags.match is not None:
        params["tags_match"] = query.tags.match
    return params


def document_from_json(obj: Mapping[str, Any]) -> Document:
    count = obj.get("memory_unit_count")
    return Document(
        id=str(obj.get("id")),
        tags=_tags(obj.get("tags")),
        content_hash=_str(obj.get("content_hash")),
        memory_count=count if isinstance(count, int) else None,
        extra=_rest(obj, ("id", "tags", "content_hash", "memory_unit_count")),
    )


def document_json(document: Document) -> JSON:
    """A document as Hindsight lists it (``DocumentResponse`` when its ``extra`` holds the detail)."""
    return {
        "id": document.id,
        "content_hash": document.content_hash,
        "memory_unit_count": document.memory_count,
        "tags": list(document.tags),
        **document.extra,
    }


def page_from_json(obj: Mapping[str, Any], read: Callable[[Mapping[str, Any]], T]) -> Page[T]:
    items = obj.get("items")
    total = obj.get("total")
    return Page(
        items=[read(i) for i in items if isinstance(i, Mapping)] if isinstance(items, list) else [],
        total=total if isinstance(total, int) else None,
    )


def page_json(page: Page[T], write: Callable[[T], JSON], *, limit: int, offset: int, **more: Any) -> JSON:
    """A page as Hindsight answers a listing: its items, total, the limit and offset asked for."""
    return {"items": [write(i) for i in page.items], "total": page.total, "limit": limit, "offset": offset, **more}


def listed_memory(obj: Mapping[str, Any]) -> Memory:
    return memory_from_json(obj, "fact_type")


def listed_memory_json(memory: Memory) -> JSON:
    return memory_json(memory, "fact_type")


# -- config and stats -----------------------------------------------------------------------------


def config_from_json(obj: Mapping[str, Any]) -> BankConfig:
    return BankConfig(
        values=_mapping(obj.get("config")) or {},
        overrides=_mapping(obj.get("overrides")) or {},
        extra=_rest(obj, ("bank_id", "config", "overrides")),
    )


def config_json(bank: str, config: BankConfig) -> JSON:
    """Hindsight's ``BankConfigResponse``."""
    return {"bank_id": bank, "config": dict(config.values), "overrides": dict(config.overrides), **config.extra}


def stats_from_json(obj: Mapping[str, Any]) -> BankStats:
    pending = sum(int(v) for k in _PENDING if isinstance(v := obj.get(k), int | float))
    return BankStats(counts=watched_counts(obj, WATCHABLE), pending=pending, raw=dict(obj))


def stats_json(stats: BankStats) -> JSON:
    """Hindsight's ``BankStatsResponse``: the backend's own account, as it gave it."""
    return dict(stats.raw)
