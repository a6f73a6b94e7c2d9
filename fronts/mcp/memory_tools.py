"""The memory tools' twins: retain and sync_retain (the governed retain, its verdicts asked for),
recall and reflect, the banks, a memory's curation, documents and operations."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from memwarden.fronts.mcp.twin import (
    Answer,
    Args,
    Refused,
    Request,
    Send,
    Twin,
    as_dict,
    bank_path,
    given,
    of,
    ok,
    query_of,
    segment,
    without,
)

# --- retain ----------------------------------------------------------------------------------------


UPDATE_MODES = ("replace", "append")


def _item(args: Args, *, update_mode: bool) -> dict[str, Any]:
    item = {"content": args["content"], "context": args.get("context", "general")}
    item |= given(args, "timestamp", "tags", "metadata", "document_id", "strategy")
    if update_mode and args.get("update_mode") in UPDATE_MODES:  # Hindsight's tool passes any other on unread
        item["update_mode"] = args["update_mode"]
    return item


async def _retain(send: Send, bank: str, item: dict[str, Any], *, is_async: bool) -> tuple[Answer, dict[str, Any]]:
    """The governed retain of one item, its verdicts asked for (``?warden=verbose``)."""
    body = {"async": is_async, "items": [item]}
    answer = await send(Request("POST", f"{bank_path(bank)}/memories", [("warden", "verbose")], body))
    if answer.status >= 400:
        raise Refused(answer)
    warden = as_dict(as_dict(answer.body).get("warden"))
    if answer.headers.get("x-warden-outbox"):
        warden["outbox"] = answer.headers["x-warden-outbox"]  # accepted; delivered when the backend is back
    return answer, warden


def _verdicts(warden: Mapping[str, Any]) -> list[dict[str, Any]]:
    decisions = warden.get("decisions")
    return [as_dict(d) for d in decisions] if isinstance(decisions, list) else []


def _kept(warden: Mapping[str, Any]) -> bool:
    """Whether governance kept the item (stored, masked, or already held); no verdicts: not judged
    (``shadow``, ``off``), as sent."""
    decisions = _verdicts(warden)
    return not decisions or any(d.get("verdict") in ("store", "redact", "duplicate") for d in decisions)


def _nothing_kept(warden: Mapping[str, Any]) -> dict[str, Any]:
    """The result of a retain governance kept nothing of: ``held`` for review (an approval delivers
    it), else ``rejected``; the rule says why."""
    first = _verdicts(warden)[0]
    why = f"{first.get('rule')}: {first.get('reason')}"
    if first.get("verdict") == "review":
        return {"status": "held", "message": f"memwarden holds this memory for review ({why})", "warden": warden}
    return {"status": "rejected", "message": f"memwarden did not keep this memory ({why})", "warden": warden}


async def retain(send: Send, bank: str, args: Args) -> Any:
    answer, warden = await _retain(send, bank, _item(args, update_mode=True), is_async=True)
    if not _kept(warden):
        return _nothing_kept(warden)
    operation = as_dict(answer.body).get("operation_id")
    return {"status": "accepted", "message": "Memory storage initiated", "operation_id": operation, "warden": warden}


async def sync_retain(send: Send, bank: str, args: Args) -> Any:
    item = _item(args, update_mode=False)
    item.setdefault("document_id", str(uuid.uuid4()))  # as the engine names it: its memories found by it
    _, warden = await _retain(send, bank, item, is_async=False)
    if not _kept(warden):
        return _nothing_kept(warden)
    if "outbox" in warden:  # accepted, not stored yet: the outbox delivers it when the backend is back
        message = "Memory accepted; the backend is unreachable, memwarden delivers it when it is back"
        return {"status": "accepted", "message": message, "memory_ids": [], "warden": warden}
    query = [("document_id", item["document_id"]), ("limit", "1000")]
    listed = await send(Request("GET", f"{bank_path(bank)}/memories/list", query))
    items = [as_dict(m) for m in as_dict(listed.body).get("items") or []] if listed.status == 200 else []
    ids = [m["id"] for m in reversed(items) if m.get("fact_type") in ("world", "experience") and "id" in m]
    return {"status": "completed", "message": "Memory stored successfully", "memory_ids": ids, "warden": warden}


# --- reads -----------------------------------------------------------------------------------------


def _fact(unit: Any) -> Any:
    if not isinstance(unit, dict):
        return unit
    out = without(unit, "attachments", "type")
    return {**out, "fact_type": unit.get("type")} if "type" in unit else out


BUDGETS = ("low", "mid", "high")


def _budget(args: Args, default: str) -> str:
    """Hindsight's tools take any budget: one it does not know is the tool's default."""
    budget = str(args.get("budget", default)).lower()
    return budget if budget in BUDGETS else default


async def recall(send: Send, bank: str, args: Args) -> Any:
    if args.get("types") == []:  # Hindsight's tool: no type asked for, nothing found (HTTP's []: every type)
        return {"results": [], "trace": None, "entities": None, "chunks": None, "source_facts": None}
    body: dict[str, Any] = {
        "query": args["query"],
        "max_tokens": args.get("max_tokens", 4096),
        "budget": _budget(args, "high"),
        **given(args, "types", "prefer_observations", "tags", "tag_groups", "query_timestamp", "min_scores"),
        **given(args, "temporal_window"),
        "include": {
            "entities": {"max_tokens": args.get("max_entity_tokens", 500)} if args.get("include_entities") else None,
            "chunks": {"max_tokens": args.get("max_chunk_tokens", 8192)} if args.get("include_chunks") else None,
            "source_facts": {"max_tokens": args.get("max_source_facts_tokens", 4096)}
            if args.get("include_source_facts")
            else None,
        },
    }
    if args.get("tags") is not None:
        body["tags_match"] = args.get("tags_match", "any")
    found = as_dict(await ok(send, Request("POST", f"{bank_path(bank)}/memories/recall", body=body)))
    chunks = found.get("chunks")
    return {
        "results": [_fact(r) for r in found.get("results") or []],
        "trace": found.get("trace"),
        "entities": found.get("entities"),
        "chunks": {
            k: {"chunk_text": c.get("text"), "chunk_index": c.get("chunk_index"), "truncated": c.get("truncated")}
            for k, c in ((k, as_dict(c)) for k, c in chunks.items())
        }
        if isinstance(chunks, dict)
        else chunks,
        "source_facts": {k: _fact(v) for k, v in found["source_facts"].items()}
        if isinstance(found.get("source_facts"), dict)
        else found.get("source_facts"),
        "source_facts_truncated": found.get("source_facts_truncated", False),
    }


async def reflect(send: Send, bank: str, args: Args) -> Any:
    body: dict[str, Any] = {
        "query": args["query"],
        "budget": _budget(args, "low"),
        "max_tokens": args.get("max_tokens", 4096),
        **given(args, "context", "response_schema", "tags"),
        "apply_all_directives": bool(args.get("apply_all_directives", False)),
        "include": {
            "facts": {} if args.get("include_based_on") else None,
            "tool_calls": {} if args.get("include_trace") else None,
        },
    }
    if args.get("tags") is not None:
        body["tags_match"] = args.get("tags_match", "any")
    found = as_dict(await ok(send, Request("POST", f"{bank_path(bank)}/reflect", body=body)))
    out = without(found, "based_on", "trace")
    if args.get("include_based_on") and isinstance(found.get("based_on"), dict):
        based: dict[str, list[Any]] = {"world": [], "experience": [], "opinion": [], "observation": []}
        for memory in found["based_on"].get("memories") or []:
            based.setdefault(str(as_dict(memory).get("type")), []).append(_fact(memory))
        based["mental-models"] = found["based_on"].get("mental_models") or []
        based["directives"] = found["based_on"].get("directives") or []
        out["based_on"] = based
    if args.get("include_trace") and isinstance(found.get("trace"), dict):
        out["tool_trace"] = found["trace"].get("tool_calls") or []
        out["llm_trace"] = found["trace"].get("llm_calls") or []
    return out


async def list_banks(send: Send, bank: str, args: Args) -> Any:
    return await ok(
        send,
        Request("GET", "/v1/default/banks", query_of(args, "query:q", "limit", "offset")),
    )


PROFILE = ("bank_id", "name", "disposition", "mission")


async def get_bank(send: Send, bank: str, args: Args) -> Any:
    """The bank's profile from the bank list (Hindsight 1.1.0 has no route for one bank's: 410); for
    a key scoped to this bank alone (the list needs ``read`` on every bank), from its config, the
    name then the bank id."""
    answer = await send(Request("GET", "/v1/default/banks", [("q", bank), ("limit", "1000")]))
    if answer.status == 403:
        config = await ok(send, Request("GET", f"{bank_path(bank)}/config"))
        values = as_dict(as_dict(config).get("config"))
        disposition = {k: values.get(f"disposition_{k}") for k in ("skepticism", "literalism", "empathy")}
        return {
            "bank_id": bank,
            "name": bank,
            "disposition": disposition,
            "mission": values.get("reflect_mission") or "",
        }
    if answer.status >= 400:
        raise Refused(answer)
    for found in map(as_dict, as_dict(answer.body).get("banks") or []):
        if found.get("bank_id") == bank:
            return {k: found.get(k) for k in PROFILE}
    raise Refused(Answer(404, {"detail": f"Bank '{bank}' not found"}))


async def get_bank_stats(send: Send, bank: str, args: Args) -> Any:
    stats = await ok(send, Request("GET", f"{bank_path(bank)}/stats"))
    if not isinstance(stats, dict):
        return stats
    renamed = {
        "nodes_by_fact_type": "node_counts",
        "links_by_link_type": "link_counts",
        "links_by_fact_type": "link_counts_by_fact_type",
        "operations_by_status": "operations",
    }
    dropped = ("total_nodes", "total_links", "pending_operations", "failed_operations", "links_breakdown")
    out = {renamed.get(k, k): v for k, v in stats.items() if k not in dropped}
    out["link_breakdown"] = []
    return out


async def get_operation(send: Send, bank: str, args: Args) -> Any:
    return without(await ok(send, Request("GET", of("/operations", "operation_id")(bank, args))), "child_operations")


# --- changes ---------------------------------------------------------------------------------------


def _memory_patch(body: Callable[[Args], dict[str, Any]]) -> Twin:
    async def twin(send: Send, bank: str, args: Args) -> Any:
        path = f"{bank_path(bank)}/memories/{segment(args['memory_id'])}"
        patch = body(args)
        if not patch:  # Hindsight's tool answers the memory unchanged
            return without(await ok(send, Request("GET", path)), "attachments")
        return without(await ok(send, Request("PATCH", path, body=patch)), "attachments")

    return twin


def _memory_fields(args: Args) -> dict[str, Any]:
    body = given(args, "text", "context", "occurred_start", "occurred_end", "mentioned_at", "fact_type", "entities")
    if body and "resolve_entities" in args:
        body["resolve_entities"] = args["resolve_entities"]
    return body


update_memory = _memory_patch(_memory_fields)
invalidate_memory = _memory_patch(
    lambda a: {"state": "valid"} if a.get("restore") else {"state": "invalidated", **given(a, "reason")}
)


async def create_bank(send: Send, bank: str, args: Args) -> Any:
    return without(await ok(send, Request("PUT", bank_path(bank), body=given(args, "name", "mission"))), "background")


async def update_bank(send: Send, bank: str, args: Args) -> Any:
    """A guarded config change (the HTTP front's: snapshot, verify, roll back): the name on the
    bank, every configuration field through the bank's config."""
    updates = dict(args.get("config_updates") or {})
    if args.get("mission") is not None:
        updates.setdefault("reflect_mission", args["mission"])
    if args.get("name") is not None or not updates:
        profile = await ok(send, Request("PUT", bank_path(bank), body=given(args, "name")))
    if updates:
        await ok(send, Request("PATCH", f"{bank_path(bank)}/config", body={"updates": updates}))
        return await get_bank(send, bank, args)
    return without(profile, "background")


async def delete_bank(send: Send, bank: str, args: Args) -> Any:
    await ok(send, Request("DELETE", bank_path(bank)))
    return {"status": "deleted", "bank_id": bank, "bank_deleted": True}


async def clear_memories(send: Send, bank: str, args: Args) -> Any:
    done = await ok(send, Request("DELETE", f"{bank_path(bank)}/memories", query_of(args, "type")))
    count = done.get("deleted_count", 0) if isinstance(done, dict) else 0
    return {"status": "cleared", "bank_id": bank, "memory_units_deleted": count}


async def delete_document(send: Send, bank: str, args: Args) -> Any:
    path = of("/documents", "document_id")(bank, args)
    answer = await send(Request("DELETE", path))
    if answer.status == 404:  # Hindsight's tool: a document that is not there is deleted already
        return {
            "status": "deleted",
            "document_id": args["document_id"],
            "document_deleted": 0,
            "memory_units_deleted": 0,
        }
    if answer.status >= 400:
        raise Refused(answer)
    units = answer.body.get("memory_units_deleted", 0) if isinstance(answer.body, dict) else 0
    return {
        "status": "deleted",
        "document_id": args["document_id"],
        "document_deleted": 1,
        "memory_units_deleted": units,
    }


async def cancel_operation(send: Send, bank: str, args: Args) -> Any:
    done = await ok(send, Request("DELETE", of("/operations", "operation_id")(bank, args)))
    return {**done, "bank_id": bank} if isinstance(done, dict) else done


async def list_operations(send: Send, bank: str, args: Args) -> Any:
    query = query_of(args, "status", "type", "limit", "offset", "exclude_parents")
    listed = await ok(send, Request("GET", f"{bank_path(bank)}/operations", query))
    return without(listed, "bank_id", "limit", "offset")
