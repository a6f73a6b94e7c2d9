"""Rows → the neutral values of ``backends/types.py`` (a memory listed or in detail, a document, a
retain's receipt), with Hindsight's other answer fields in their ``extra``: the store's HTTP app
writes them back with ``backends/hindsight_json.py`` exactly as Hindsight answers, and the backend
protocol (``store/backend.py``) hands them to governance as they are."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memwarden.backends.types import Document, Memory, Receipt


def loads(value: str | None, default: Any) -> Any:
    """A stored JSON column's value; ``default`` for NULL."""
    if value is None:
        return default
    if value in ("[]", "{}"):  # most rows' tags and metadata: skip the decoder (recall returns ~200)
        return [] if value == "[]" else {}
    return json.loads(value)


def entity_names(r: sqlite3.Row) -> list[str]:
    """The names a memory's ``entities`` column holds (a JSON object of names by key)."""
    return list(loads(r["entities"], {}).values())


def _memory(r: sqlite3.Row, extra: dict[str, Any]) -> Memory:
    """A memory's row, with the fields Hindsight's list item and detail share and ``extra``'s."""
    return Memory(
        r["id"],
        r["text"],
        r["fact_type"],
        r["document_id"],
        r["context"],
        tuple(loads(r["tags"], [])),
        loads(r["metadata"], {}),
        r["mentioned_at"],
        r["occurred_start"],
        r["occurred_end"],
        r["state"],
        {
            "date": r["mentioned_at"],
            "chunk_id": r["chunk_id"],
            "consolidated_at": None,
            "consolidation_failed_at": None,
            "invalidation_reason": r["invalidation_reason"],
            "invalidated_at": r["invalidated_at"],
            "edited_at": r["edited_at"],
            **extra,
        },
    )


def memory_list_item(r: sqlite3.Row) -> Memory:
    """A memory as ``GET …/memories/list`` lists it (``MemoryUnitListItem``; its kind as ``fact_type``)."""
    return _memory(
        r,
        {
            "entities": ", ".join(entity_names(r)),
            "proof_count": 1,
            "updated_at": r["updated_at"],
            "source_memory_ids": [],
        },
    )


def memory_detail(r: sqlite3.Row) -> Memory:
    """A world fact as ``GET``/``PATCH …/memories/{id}`` answers it (its kind as ``type``)."""
    return _memory(r, {"entities": entity_names(r), "observation_scopes": None})


def document(r: sqlite3.Row, unit_count: int) -> Document:
    """A document as ``GET …/documents`` lists it."""
    return Document(
        id=r["id"],
        tags=tuple(loads(r["tags"], [])),
        content_hash=r["content_hash"],
        memory_count=unit_count,
        extra={
            "bank_id": r["bank_id"],
            "created_at": r["created_at"],
            "updated_at": r["updated_at"],
            "text_length": len(r["original_text"] or ""),
            "retain_params": loads(r["retain_params"], None),
            "document_metadata": loads(r["metadata"], None),
            "matched_fields": [],
        },
    )


# What the store answers to /version: the Hindsight release whose API it speaks, and the features
# it has of that release.
API_VERSION = "1.1.0"
FEATURES = {
    "observations": False,
    "mcp": False,
    "worker": True,
    "bank_config_api": True,
    "bank_llm_health": False,
    "file_upload_api": False,
    "document_export_api": True,
    "document_import_api": True,
    "audit_log": False,
    "llm_trace": False,
    "store_document_text": True,
}


def retained(items_count: int, *, operation_id: str | None) -> Receipt:
    """Hindsight's answer to a retain: queued (``operation_id``) or done."""
    usage = None if operation_id is not None else dict.fromkeys(_USAGE, 0)
    return Receipt(items_count, operation_id, {"operation_ids": None, "usage": usage})


_USAGE = ("input_tokens", "output_tokens", "total_tokens", "cached_tokens", "thoughts_tokens")
