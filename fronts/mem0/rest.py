"""The open-source server's dialect (Mem0's self-hosted REST server, FastAPI): ``/mem0/memories``,
``/mem0/memories/{id}``, ``/mem0/memories/{id}/history``, ``/mem0/search``, ``/mem0/reset``; no
trailing slashes. ``X-API-Key`` or ``Authorization: Bearer`` with a memwarden key.

Its shapes: an add answers ``{"results": [{id, memory, event, role}]}`` at once (governed, stored);
errors are FastAPI's ``{"detail": …}`` — 400 for an add, a search or a delete naming no entity id
(a search's in its filters, or at the top level, as Mem0 still takes them), 404 for an
unknown memory, 422 for a body its model refuses. Filters are the open-source ones: flat keys that
are not fields are metadata keys.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Send

from memwarden.fronts.decisions import decisions_header
from memwarden.fronts.mem0 import reads, writes
from memwarden.fronts.mem0.context import Call, body_of
from memwarden.fronts.mem0.models import Mem0Error, RestSearchRequest, validated
from memwarden.fronts.mem0.platform import handler, query_entities
from memwarden.fronts.mem0.queries import ServerListQuery
from memwarden.fronts.mem0.shapes import memory_json
from memwarden.wire.asgi import send_json

OSS_ENTITIES = ("user_id", "agent_id", "run_id")


async def add(call: Call, receive: Receive, send: Send) -> None:
    added = await writes.add(call, await body_of(call, receive))
    polled = await reads.event(call, added.event_id)
    results = [{"id": r["id"], "memory": r["data"]["memory"], "event": r["event"]} for r in polled["results"]]
    await send_json(
        send,
        200,
        {"results": results, "warden": polled["warden"]},
        headers=[decisions_header(added.judgements)],
    )


async def list_memories(call: Call, receive: Receive, send: Send) -> None:
    query = call.read(ServerListQuery)
    named, top_k = query.named(), query.top_k
    node = reads.filter_of(call, named)
    found = await reads.listed(call, node)
    await send_json(send, 200, {"results": [memory_json(r, oss=True) for r in found[:top_k]]})


async def get_memory(call: Call, receive: Receive, send: Send) -> None:
    row = await reads.get(call, call.path("memory_id"))
    await send_json(send, 200, memory_json(row, oss=True))


async def update_memory(call: Call, receive: Receive, send: Send) -> None:
    await writes.update(call, call.path("memory_id"), await body_of(call, receive))
    await send_json(send, 200, {"message": "Memory updated successfully!"})


async def delete_memory(call: Call, receive: Receive, send: Send) -> None:
    await writes.delete(call, call.path("memory_id"))
    await send_json(send, 200, {"message": "Memory deleted successfully"})


async def history(call: Call, receive: Receive, send: Send) -> None:
    await send_json(send, 200, await reads.history(call, call.path("memory_id")))


async def search(call: Call, receive: Receive, send: Send) -> None:
    payload = await body_of(call, receive)
    request: RestSearchRequest = validated(RestSearchRequest, payload, status=422)
    filters: dict[str, Any] = dict(request.filters or {})
    for name in OSS_ENTITIES:  # deprecated top-level ids: moved into the filters, as the server does
        if isinstance(payload, dict) and payload.get(name) is not None:
            filters.setdefault(name, payload[name])
    if not any(filters.get(name) is not None for name in OSS_ENTITIES):
        # Mem0's server refuses it (its Memory.search does): never every user's memories at once.
        raise Mem0Error(400, "filters must contain at least one of: user_id, agent_id, run_id")
    node = reads.filter_of(call, filters)
    if request.top_k == 0:  # as the server's vector store answers a limit of 0
        await send_json(send, 200, {"results": []})
        return
    hits = await reads.search(call, request.query, node, top_k=request.top_k, threshold=request.threshold or 0.0)
    await send_json(send, 200, {"results": hits})


async def delete_all(call: Call, receive: Receive, send: Send) -> None:
    named = query_entities(call)
    if not named:
        raise Mem0Error(400, "At least one identifier (user_id, agent_id, run_id) is required.")
    await writes.erase_entities(call, named)
    await send_json(send, 200, {"message": "All relevant memories deleted"})


async def reset(call: Call, receive: Receive, send: Send) -> None:
    await writes.erase_entities(call, {})
    await send_json(send, 200, {"message": "All memories reset"})


HANDLERS = {
    name: handler(work, oss=True)
    for name, work in {
        "add": add,
        "list": list_memories,
        "get": get_memory,
        "update": update_memory,
        "delete": delete_memory,
        "history": history,
        "search": search,
        "delete_all": delete_all,
        "reset": reset,
    }.items()
}
