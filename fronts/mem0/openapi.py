"""The Mem0 front's paths in memwarden's OpenAPI document: each operation, its success answer
and Mem0's error answers (bodies as Mem0 shapes them, ``fronts/mem0``'s docstrings)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memwarden.fronts.mem0.models import AddRequest, BatchRequest, ListRequest, Message, SearchRequest, UpdateRequest
from memwarden.fronts.mem0.queries import EntityQuery, PageQuery, ServerListQuery
from memwarden.fronts.openapi_paths import body_schema, json_answer, operation, path_id
from memwarden.fronts.query import QueryModel, openapi_parameters

Json = dict[str, Any]
ANY: Json = {"type": "object", "additionalProperties": True}


def _schema(model: type[BaseModel]) -> Json:
    """A request model's schema (:func:`~memwarden.fronts.openapi_paths.body_schema`); a message
    list as Mem0 documents it."""
    out = body_schema(model)
    if "messages" in out.get("properties", {}):
        messages = {"type": "array", "minItems": 1, "items": body_schema(Message)}
        out["properties"]["messages"] = {**messages, "description": "The conversation to remember"}
    return out


ADD, UPDATE, SEARCH, LIST, BATCH = (
    _schema(m) for m in (AddRequest, UpdateRequest, SearchRequest, ListRequest, BatchRequest)
)
# (path, method, operation id, summary, the ids in the path, its body's schema, if it takes one)
OPERATIONS = [
    ("/mem0/v1/ping/", "get", "mem0_ping", "Mem0: the key's project (the Mem0 bank)", (), None),
    ("/mem0/v3/memories/add/", "post", "mem0_add", "Mem0: add messages, governed (answers the event)", (), ADD),
    ("/mem0/v1/memories/", "post", "mem0_add_v1", "Mem0 1.x: add messages, governed", (), ADD),
    ("/mem0/v1/memories/", "delete", "mem0_delete_all", "Mem0: erase an entity's memories", (), None),
    ("/mem0/v1/event/{event_id}/", "get", "mem0_event", "Mem0: an add's event and verdicts", ("event_id",), None),
    ("/mem0/v3/memories/", "post", "mem0_list", "Mem0: memories by filter, paged", (), LIST),
    ("/mem0/v2/memories/", "post", "mem0_list_v2", "Mem0 1.x: memories by filter", (), LIST),
    ("/mem0/v3/memories/search/", "post", "mem0_search", "Mem0: search by filter", (), SEARCH),
    ("/mem0/v2/memories/search/", "post", "mem0_search_v2", "Mem0 1.x: search by filter", (), SEARCH),
    ("/mem0/v1/memories/{memory_id}/", "get", "mem0_get", "Mem0: one memory", ("memory_id",), None),
    ("/mem0/v1/memories/{memory_id}/", "put", "mem0_update", "Mem0: a governed re-write", ("memory_id",), UPDATE),
    ("/mem0/v1/memories/{memory_id}/", "delete", "mem0_delete", "Mem0: archive (or erase) one", ("memory_id",), None),
    (
        "/mem0/v1/memories/{memory_id}/history/",
        "get",
        "mem0_history",
        "Mem0: a memory's history",
        ("memory_id",),
        None,
    ),
    ("/mem0/v1/entities/", "get", "mem0_entities", "Mem0: users, agents, apps, runs", (), None),
    (
        "/mem0/v2/entities/{entity_type}/{entity_name}/",
        "delete",
        "mem0_delete_entity",
        "Mem0: erase an entity",
        ("entity_type", "entity_name"),
        None,
    ),
    ("/mem0/v1/batch/", "put", "mem0_batch_update", "Mem0: update up to 1000", (), BATCH),
    ("/mem0/v1/batch/", "delete", "mem0_batch_delete", "Mem0: delete up to 1000", (), ANY),
    ("/mem0/memories", "post", "mem0_rest_add", "Mem0 server: add messages, governed", (), ADD),
    ("/mem0/memories", "get", "mem0_rest_list", "Mem0 server: memories of an entity", (), None),
    ("/mem0/memories", "delete", "mem0_rest_delete_all", "Mem0 server: erase an entity's memories", (), None),
    ("/mem0/memories/{memory_id}", "get", "mem0_rest_get", "Mem0 server: one memory", ("memory_id",), None),
    (
        "/mem0/memories/{memory_id}",
        "put",
        "mem0_rest_update",
        "Mem0 server: a governed re-write",
        ("memory_id",),
        UPDATE,
    ),
    (
        "/mem0/memories/{memory_id}",
        "delete",
        "mem0_rest_delete",
        "Mem0 server: archive (or erase) one",
        ("memory_id",),
        None,
    ),
    ("/mem0/memories/{memory_id}/history", "get", "mem0_rest_history", "Mem0 server: history", ("memory_id",), None),
    ("/mem0/search", "post", "mem0_rest_search", "Mem0 server: search", (), SEARCH),
    ("/mem0/reset", "post", "mem0_rest_reset", "Mem0 server: erase the bank (admin)", (), None),
]


SERVER_422 = "The open-source server's refusal of a body or query parameter (FastAPI's list, naming it)"
# The operations that read the query string: its parameters, as the handler reads them.
QUERIES: dict[str, type[QueryModel]] = {
    "mem0_list": PageQuery,
    "mem0_delete_all": EntityQuery,
    "mem0_rest_list": ServerListQuery,
    "mem0_rest_delete_all": EntityQuery,
}


def mem0_paths() -> dict[str, Json]:
    paths: dict[str, Json] = {}
    for path, method, op_id, summary, ids, body in OPERATIONS:
        query = openapi_parameters(QUERIES[op_id]) if op_id in QUERIES else []
        op = operation(
            op_id,
            summary,
            json_answer(ANY, "Mem0's answer"),
            params=(*(path_id(i, i.replace("_", " ")) for i in ids), *query),
            body=body,
            errors={
                400: "Mem0's refusal (malformed filter, missing entity id, non-text message …)",
                404: "Not found",
                **({422: SERVER_422} if op_id.startswith("mem0_rest") else {}),
            },
        )
        op["tags"] = ["mem0"]
        paths.setdefault(path, {})[method] = op
    unknown = operation("mem0_unknown", "Any other path under /mem0: 404, never passed to the backend",
                        json_answer(ANY, "never"), params=(path_id("rest", "the rest of the path"),),
                        errors={404: "Not Found"}, open_route=True)  # fmt: skip
    unknown["tags"] = ["mem0"]
    paths["/mem0/{rest}"] = {"get": unknown}
    return paths
