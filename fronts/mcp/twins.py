"""Each MCP tool as its HTTP twin: the Hindsight request the tool's arguments make, and the tool's
result made from the answer — shaped as Hindsight 1.1.0's own MCP server gives it.

A tool call is its twin's request, sent through memwarden's own app (:mod:`.dispatch`): the key's
scope, the Origin check, governance (judge, record, deliver, audit, the outbox; label-blind reads;
the guarded config change; the confirmed deletions) and the backend are the HTTP route's, by
construction — one write path for both ways in. Where Hindsight's tool answers from an engine call
the HTTP API does not expose one for one, the result is rebuilt from what the API answers: a
retain's stored ids from its document's memories, a bank's profile from the bank list, a deletion's
counts from the one total HTTP gives (``deleted_count``). The ``warden`` key of a write's result
says what governance did with it, as the HTTP front's ``X-Warden-Decisions`` and verbose body do.
"""

from __future__ import annotations

from collections.abc import Mapping

from memwarden.fronts.mcp import memory_tools as m
from memwarden.fronts.mcp import model_tools as k
from memwarden.fronts.mcp.twin import Twin, acted, deleted, get, in_bank, of

TWINS: Mapping[str, Twin] = {
    "retain": m.retain,
    "sync_retain": m.sync_retain,
    "recall": m.recall,
    "reflect": m.reflect,
    "list_banks": m.list_banks,
    "create_bank": m.create_bank,
    "list_mental_models": k.list_mental_models,
    "get_mental_model": get(of("/mental-models", "mental_model_id"), ("detail",)),
    "create_mental_model": k.create_mental_model,
    "update_mental_model": k.update_mental_model,
    "delete_mental_model": acted("DELETE", of("/mental-models", "mental_model_id"), deleted("mental_model_id")),
    "refresh_mental_model": acted(
        "POST",
        of("/mental-models", "mental_model_id", "/refresh"),
        lambda a, d: {"message": f"Refresh queued for mental model '{a['mental_model_id']}'."},
    ),
    "clear_mental_model": k.clear_mental_model,
    "list_directives": k.list_directives,
    "create_directive": k.create_directive,
    "delete_directive": acted("DELETE", of("/directives", "directive_id"), deleted("directive_id")),
    "list_memories": get(in_bank("/memories/list"), ("type", "q", "limit", "offset", "tags", "tags_match")),
    "get_memory": get(of("/memories", "memory_id"), drop=("attachments",)),
    "update_memory": m.update_memory,
    "invalidate_memory": m.invalidate_memory,
    "list_documents": get(in_bank("/documents"), ("q", "limit", "offset")),
    "get_document": get(of("/documents", "document_id"), drop=("attachments",)),
    "delete_document": m.delete_document,
    "list_operations": m.list_operations,
    "get_operation": m.get_operation,
    "cancel_operation": m.cancel_operation,
    "list_tags": get(in_bank("/tags"), ("q", "limit", "offset")),
    "get_bank": m.get_bank,
    "get_bank_stats": m.get_bank_stats,
    "update_bank": m.update_bank,
    "delete_bank": m.delete_bank,
    "clear_memories": m.clear_memories,
    "get_knowledge_base_tree": k.get_knowledge_base_tree,
    "search_knowledge_base": k.search_knowledge_base,
    "get_knowledge_page": get(of("/knowledge-base/pages", "page_id"), drop=("body",)),
    "create_knowledge_folder": k.create_knowledge_folder,
    "create_knowledge_page": k.create_knowledge_page,
    "update_knowledge_node": k.update_knowledge_node,
    "delete_knowledge_node": acted("DELETE", of("/knowledge-base/nodes", "node_id"), deleted("node_id")),
}
