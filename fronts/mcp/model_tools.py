"""The twins of the tools that are not memories: mental models, directives and the knowledge base's
folders and pages (their writes scanned for secrets by their HTTP routes, as every write's fields)."""

from __future__ import annotations

from typing import Any

from memwarden.fronts.mcp.twin import (
    Args,
    Request,
    Send,
    as_dict,
    bank_path,
    given,
    listed,
    of,
    ok,
    query_of,
    without,
)

# --- mental models, directives, the knowledge base --------------------------------------------------


def _trigger(args: Args, shorthand: str) -> dict[str, Any] | None:
    trigger = dict(args.get("trigger") or {})
    if args.get("tags_match") is not None:
        trigger.setdefault("tags_match", args["tags_match"])
    if args.get(shorthand) is not None:
        trigger.setdefault("refresh_after_consolidation", args[shorthand])
    return trigger or None


async def create_mental_model(send: Send, bank: str, args: Args) -> Any:
    body = {"name": args["name"], "source_query": args["source_query"], "max_tokens": args.get("max_tokens", 2048)}
    body |= given(args, "tags") | ({"id": args["mental_model_id"]} if args.get("mental_model_id") else {})
    body["trigger"] = _trigger(args, "trigger_refresh_after_consolidation") or {"refresh_after_consolidation": False}
    made = await ok(send, Request("POST", f"{bank_path(bank)}/mental-models", body=body))
    message = f"Mental model '{args['name']}' created. Content is being generated asynchronously."
    return {**as_dict(made), "status": "created", "message": message}


async def update_mental_model(send: Send, bank: str, args: Args) -> Any:
    body = given(args, "name", "source_query", "max_tokens", "tags")
    trigger = _trigger(args, "trigger_refresh_after_consolidation")
    if trigger:
        body["trigger"] = trigger
    path = of("/mental-models", "mental_model_id")(bank, args)
    return without(await ok(send, Request("PATCH", path, body=body)), "is_knowledge_page", "is_stale")


async def clear_mental_model(send: Send, bank: str, args: Args) -> Any:
    model = args["mental_model_id"]
    await ok(send, Request("POST", of("/mental-models", "mental_model_id", "/clear")(bank, args)))
    message = f"Mental model '{model}' content cleared. Call refresh_mental_model to rebuild."
    return {"mental_model_id": model, "status": "cleared", "message": message}


async def create_directive(send: Send, bank: str, args: Args) -> Any:
    body = {"name": args["name"], "content": args["content"], "priority": args.get("priority", 0)}
    body |= {"is_active": args.get("is_active", True)} | given(args, "tags")
    return await ok(send, Request("POST", f"{bank_path(bank)}/directives", body=body))


async def list_mental_models(send: Send, bank: str, args: Args) -> Any:
    query = query_of(args, "tags", "limit", "offset")
    found = listed(await ok(send, Request("GET", f"{bank_path(bank)}/mental-models", query)))
    nulls = ("source_query", "content", "max_tokens", "trigger", "reflect_response")
    if isinstance(found, dict):
        found["items"] = [
            {k: v for k, v in m.items() if not (k in nulls and v is None)} for m in found.get("items", [])
        ]
    return found


async def list_directives(send: Send, bank: str, args: Args) -> Any:
    query = query_of(args, "tags", "active_only", "limit", "offset")
    return listed(await ok(send, Request("GET", f"{bank_path(bank)}/directives", query)))


def _node(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    keys = ["id", "kind", "name", "parent_id", "managed"]
    if node.get("kind") == "page":
        keys += ["mental_model_id", "description", "tags", "timestamp"]
        out = {k: node.get(k) for k in keys}
        out |= {k: node[k] for k in ("trigger", "is_stale") if node.get(k) is not None}
        return out
    return {
        **{k: node.get(k) for k in (*keys, "timestamp")},
        "children": [_node(c) for c in node.get("children") or []],
    }


async def get_knowledge_base_tree(send: Send, bank: str, args: Args) -> Any:
    tree = await ok(send, Request("GET", f"{bank_path(bank)}/knowledge-base/tree"))
    return {"roots": [_node(n) for n in tree.get("roots", [])]} if isinstance(tree, dict) else tree


async def search_knowledge_base(send: Send, bank: str, args: Args) -> Any:
    query = [("q", str(args["query"])), ("limit", str(min(max(int(args.get("limit", 10)), 1), 50)))]
    if not str(args["query"]).strip():
        return {"results": [], "total": 0}
    return await ok(send, Request("GET", f"{bank_path(bank)}/knowledge-base/search", query))


async def create_knowledge_folder(send: Send, bank: str, args: Args) -> Any:
    body = {"name": args["name"], **given(args, "parent_id")}
    return _node(await ok(send, Request("POST", f"{bank_path(bank)}/knowledge-base/folders", body=body)))


def _page_body(args: Args) -> dict[str, Any]:
    body = given(args, "name", "source_query", "max_tokens") | ({"tags": args["tags"]} if args.get("tags") else {})
    trigger = _trigger({k: v for k, v in args.items() if k != "tags_match"}, "refresh_after_consolidation")
    return body | ({"trigger": trigger} if trigger else {})


async def create_knowledge_page(send: Send, bank: str, args: Args) -> Any:
    body = _page_body(args) | given(args, "parent_id")
    made = await ok(send, Request("POST", f"{bank_path(bank)}/knowledge-base/pages", body=body))
    message = f"Page '{args['name']}' created. Content is being generated asynchronously."
    return {**as_dict(made), "status": "created", "message": message}


async def update_knowledge_node(send: Send, bank: str, args: Args) -> Any:
    body = _page_body(args)
    if args.get("parent_id") is not None:
        body["parent_id"] = None if args["parent_id"] == "root" else args["parent_id"]
    node = await ok(send, Request("PATCH", of("/knowledge-base/nodes", "node_id")(bank, args), body=body))
    return without(_node(node), "is_stale")
