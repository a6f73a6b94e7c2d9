"""Mem0's JSON read into the neutral types and written from them (the Mem0 backend's half of
``backends/mem0.py``; ``backends/hindsight_json.py`` is Hindsight's).

How a memwarden item lives in Mem0 (one Mem0 memory per item, or several when Mem0's own
extraction runs on it):

* the bank is a Mem0 entity id — ``user_id`` by default (``backends.mem0.entity``): the scope every
  Mem0 call takes and ``DELETE /memories?user_id=`` erases whole;
* the item's document is the Mem0 ``run_id`` (a run groups the memories of one retain in Mem0 as a
  document does in Hindsight): a document's memories are listed, found again and deleted by Mem0's
  own entity filter, exactly, without a semantic search;
* what Mem0 has no field for is in the memory's metadata under ``mw_`` keys: ``mw_document`` (the
  document id as sent: an entity id cannot hold whitespace, so ``run_id`` may be a stand-in),
  ``mw_tags``, ``mw_context``, ``mw_timestamp``, ``mw_metadata`` (the item's own metadata),
  ``mw_parts`` (how many items the document has: it is held whole only with all of them);
  ``created_at`` is the item's timestamp when it has one (Mem0 keeps a ``created_at`` it is given).

Read back, a Mem0 memory is a ``world`` fact (Mem0 has no memory kinds); Mem0's other fields
(``hash``, ``score``, ``categories``, ``created_at``, ``updated_at``, ``role``) are in ``extra``
under ``mem0``, its search score as the semantic score.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.backends.types import JSON, Item, Memory

PREFIX = "mw_"
DOCUMENT, TAGS, CONTEXT, TIMESTAMP, METADATA, PARTS = (
    f"{PREFIX}{k}" for k in ("document", "tags", "context", "timestamp", "metadata", "parts")
)
ENTITY_OK = re.compile(r"\S{1,128}")
ROLES = ("user", "assistant")


def entity_id(value: str) -> str:
    """``value`` as a Mem0 entity id: itself when Mem0 takes it (no whitespace, at most 128
    characters), else a readable stand-in — its words joined by ``_`` (at most 64 characters), ``~``
    and 10 hex digits of its SHA-256 (a long digest alone would look like a token to a secret
    scanner). A document's real id stays in its memories' metadata; a bank's is memwarden's own."""
    if ENTITY_OK.fullmatch(value) and "~" not in value:
        return value
    words = "_".join(value.split())[:64] or "id"
    return f"{words}~{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def add_json(bank_key: str, bank: str, item: Item, *, infer: bool, parts: int = 1) -> JSON:
    """A Mem0 add's body for one item; ``parts``: how many items its document has (a document is
    held whole only when that many of its memories are there)."""
    role = (item.metadata or {}).get("mem0_role")
    metadata: JSON = {TAGS: list(item.tags), PARTS: parts}
    if item.document_id is not None:
        metadata[DOCUMENT] = item.document_id
    if item.context is not None:
        metadata[CONTEXT] = item.context
    if item.timestamp is not None:
        metadata[TIMESTAMP] = item.timestamp
        metadata["created_at"] = item.timestamp
    if item.metadata is not None:
        metadata[METADATA] = dict(item.metadata)
    body: JSON = {
        "messages": [{"role": role if role in ROLES else "user", "content": item.content}],
        bank_key: entity_id(bank),
        "metadata": metadata,
        "infer": infer,
    }
    if item.document_id is not None:
        body["run_id"] = entity_id(item.document_id)
    return body


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def memory_from_json(obj: Mapping[str, Any]) -> Memory:
    """A Mem0 memory (a search hit, a listed or fetched one) in neutral terms."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    tags = meta.get(TAGS)
    own = meta.get(METADATA)
    mem0 = {k: obj[k] for k in ("hash", "score", "categories", "created_at", "updated_at", "role") if k in obj}
    extra: JSON = {"mem0": mem0}
    if isinstance(parts := meta.get(PARTS), int):
        extra["parts"] = parts
    if isinstance(obj.get("score"), int | float):
        score = float(obj["score"])  # Hindsight's RecallScores: Mem0's score is its final and semantic one
        extra["scores"] = {"final": score, "semantic": score, "keyword": None, "reranker": None}
    return Memory(
        id=str(obj.get("id", "")),
        text=str(obj.get("memory") or ""),
        kind="world",
        document_id=_str(meta.get(DOCUMENT)),
        context=_str(meta.get(CONTEXT)),
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        metadata=dict(own) if isinstance(own, Mapping) else None,
        mentioned_at=_str(obj.get("created_at")),
        occurred_start=_str(meta.get(TIMESTAMP)),
        state="valid",
        extra=extra,
    )


def results_of(answer: Any) -> list[Mapping[str, Any]]:
    """The memories of an answer: ``{"results": [...]}`` or a bare list (older servers)."""
    found = answer.get("results") if isinstance(answer, Mapping) else answer
    return [m for m in found if isinstance(m, Mapping)] if isinstance(found, list) else []


def _key(text: str, tags: Sequence[str], context: str | None, metadata: Mapping[str, Any] | None) -> str:
    return json.dumps([text, sorted(tags), context, metadata or None], sort_keys=True, default=str)


def same_items(held: Sequence[Memory], items: Sequence[Item]) -> bool:
    """Whether ``held`` (a document's memories in Mem0) are ``items`` stored verbatim already — text,
    tags, context and metadata: a delivery that landed before its answer was lost, not to be stored
    twice."""
    have = sorted(_key(m.text, m.tags, m.context, m.metadata) for m in held)
    return have == sorted(_key(i.content, i.tags, i.context, i.metadata) for i in items)


def holds_items(held: Sequence[Memory], items: Sequence[Item]) -> bool:
    """Whether ``held`` holds each of ``items`` verbatim already: an append that landed before its
    answer was lost, not to be stored twice."""
    have = {_key(m.text, m.tags, m.context, m.metadata) for m in held}
    return all(_key(i.content, i.tags, i.context, i.metadata) in have for i in items)


def whole(held: Sequence[Memory]) -> bool:
    """Whether a document's memories are all there: as many as each says its document has — or, for
    a document appended to (its memories say different counts), as many as the newest says."""
    parts = [m.extra.get("parts") for m in held]
    counts = {p for p in parts if isinstance(p, int)}
    return bool(held) and len(counts) == len({*parts}) and bool(counts) and max(counts) == len(held)
