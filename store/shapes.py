"""Rows → Hindsight's shapes of a memory (list item, detail) and of a document."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def loads(value: str | None, default: Any) -> Any:
    """A stored JSON column's value; ``default`` for NULL."""
    if value is None:
        return default
    if value in ("[]", "{}"):  # most rows' tags and metadata: skip the decoder (recall returns ~200)
        return [] if value == "[]" else {}
    return json.loads(value)


def _entities(r: sqlite3.Row) -> list[str]:
    """The names a memory's ``entities`` column holds (a JSON object of names by key)."""
    return list(loads(r["entities"], {}).values())


def _unit_common(r: sqlite3.Row) -> dict[str, Any]:
    """The fields Hindsight's list item and detail of a memory share."""
    return {
        "id": r["id"],
        "text": r["text"],
        "context": r["context"],
        "date": r["mentioned_at"],
        "document_id": r["document_id"],
        "mentioned_at": r["mentioned_at"],
        "occurred_start": r["occurred_start"],
        "occurred_end": r["occurred_end"],
        "chunk_id": r["chunk_id"],
        "tags": loads(r["tags"], []),
        "metadata": loads(r["metadata"], {}),
        "consolidated_at": None,
        "consolidation_failed_at": None,
        "state": r["state"],
        "invalidation_reason": r["invalidation_reason"],
        "invalidated_at": r["invalidated_at"],
        "edited_at": r["edited_at"],
    }


def unit_list_item(r: sqlite3.Row) -> dict[str, Any]:
    """``MemoryUnitListItem`` (``GET …/memories/list``)."""
    return {
        **_unit_common(r),
        "fact_type": r["fact_type"],
        "entities": ", ".join(_entities(r)),
        "proof_count": 1,
        "updated_at": r["updated_at"],
        "source_memory_ids": [],
    }


def unit_detail(r: sqlite3.Row) -> dict[str, Any]:
    """A world fact as ``GET``/``PATCH …/memories/{id}`` answers it."""
    return {**_unit_common(r), "type": r["fact_type"], "entities": _entities(r), "observation_scopes": None}


def document_item(r: sqlite3.Row, unit_count: int) -> dict[str, Any]:
    return {
        "id": r["id"],
        "bank_id": r["bank_id"],
        "content_hash": r["content_hash"],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "text_length": len(r["original_text"] or ""),
        "memory_unit_count": unit_count,
        "retain_params": loads(r["retain_params"], None),
        "document_metadata": loads(r["metadata"], None),
        "tags": loads(r["tags"], []),
        "matched_fields": [],
    }


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


def retained(bank: str, items_count: int, *, operation_id: str | None) -> dict[str, Any]:
    """Hindsight's answer to a retain: queued (``operation_id``) or done."""
    return {
        "success": True,
        "bank_id": bank,
        "items_count": items_count,
        "async": operation_id is not None,
        "operation_id": operation_id,
        "operation_ids": None,
        "usage": None
        if operation_id is not None
        else {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "cached_tokens": 0, "thoughts_tokens": 0},
    }
