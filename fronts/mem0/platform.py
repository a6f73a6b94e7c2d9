"""The platform dialect: the paths the official ``mem0ai`` client calls (2.x, and 1.x's), under
``/mem0``. ``MemoryClient(host="http://HOST:PORT/mem0", api_key=<a memwarden key>)``.

Answers are Mem0's: an add is ``{"event_id", "status": "PENDING"}`` (governed already; the event
says what became of each message, ``GET /v1/event/{id}/``), a list ``{count, next, previous,
results}``, a search ``{"results": [...]}``; errors ``{"error": message}``. Every governed answer
carries ``X-Warden-Decisions`` (counts per verdict) like a Hindsight retain's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from starlette.types import Receive, Scope, Send

from memwarden.fronts.decisions import decisions_header
from memwarden.fronts.mem0 import reads, writes
from memwarden.fronts.mem0.context import Call, body_of, call_of, send_error
from memwarden.fronts.mem0.models import (
    ENTITY_FIELDS,
    ListRequest,
    Mem0Error,
    SearchRequest,
    entity_problem,
    validated,
)
from memwarden.fronts.mem0.queries import DEFAULT_PAGE_SIZE, EntityQuery, PageQuery
from memwarden.fronts.mem0.shapes import memory_json
from memwarden.governance.errors import ServiceError
from memwarden.governance.state import AppState
from memwarden.wire.asgi import ClientGone, send_json

Work = Callable[[Call, Receive, Send], Awaitable[None]]
ENTITY_TYPES = {"user": "user_id", "agent": "agent_id", "app": "app_id", "run": "run_id"}


def handler(work: Work, *, oss: bool = False) -> Callable[[AppState, Scope, Receive, Send], Awaitable[None]]:
    """An endpoint's handler: the call built, ``work`` run, a :class:`Mem0Error` or a governance
    :class:`ServiceError` answered in the dialect's shape."""

    async def handle(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await work(call_of(state, scope, oss=oss), receive, send)
        except Mem0Error as exc:
            await send_error(send, exc, oss=oss)
        except ServiceError as exc:  # governance's refusals (busy, queue full, not done): said once, here
            retry = [] if exc.retry_after is None else [(b"retry-after", str(exc.retry_after).encode())]
            await send_error(send, Mem0Error(exc.status, exc.detail), oss=oss, headers=retry)
        except ClientGone:
            return

    return handle


async def ping(call: Call, receive: Receive, send: Send) -> None:
    body = {"status": "ok", "org_id": "memwarden", "project_id": call.bank, "user_email": None}
    await send_json(send, 200, body)


def _decisions(added: writes.Added) -> list[tuple[bytes, bytes]]:
    return [decisions_header(added.judgements), (b"x-warden-event", added.event_id.encode())]


async def add_v3(call: Call, receive: Receive, send: Send) -> None:
    added = await writes.add(call, await body_of(call, receive))
    await send_json(send, 200, {"event_id": added.event_id, "status": "PENDING"}, headers=_decisions(added))


async def add_v1(call: Call, receive: Receive, send: Send) -> None:
    """1.x clients: ``async_mode`` (their default) answers the queued event; else v1.1's results."""
    payload = await body_of(call, receive)
    added = await writes.add(call, payload)
    if isinstance(payload, dict) and payload.get("async_mode", True) is not False:
        body: Any = [{"message": "Memory processing has been queued for background execution",
                      "status": "PENDING", "event_id": added.event_id}]  # fmt: skip
    else:
        body = {"results": (await reads.event(call, added.event_id))["results"]}
        body["results"] = [{"id": r["id"], "memory": r["data"]["memory"], "event": r["event"]} for r in body["results"]]
    await send_json(send, 200, body, headers=_decisions(added))


async def event(call: Call, receive: Receive, send: Send) -> None:
    await send_json(send, 200, await reads.event(call, call.path("event_id")))


def _no_top_level_entities(payload: dict[str, Any], what: str) -> None:
    named = [k for k in ENTITY_FIELDS if k in payload]
    if named:
        raise Mem0Error(
            400, f"Top-level entity parameters {named} are not supported in {what}; use filters={{'user_id': '...'}}"
        )


def _page_url(call: Call, page: int, size: int) -> str:
    headers = dict(call.scope["headers"])
    host = headers.get(b"host", b"").decode("latin-1")
    scheme = call.scope.get("scheme", "http")
    return f"{scheme}://{host}{call.scope['path']}?{urlencode({'page': page, 'page_size': size})}"


async def list_v3(call: Call, receive: Receive, send: Send) -> None:
    payload = await body_of(call, receive, empty={})
    request: ListRequest = validated(ListRequest, payload, status=400)
    _no_top_level_entities(payload, "get_all")
    if request.filters is None:
        raise Mem0Error(400, "filters is required (e.g. {'user_id': 'alice'})")
    node = reads.filter_of(call, request.filters)
    paging = call.read(PageQuery)
    page, size = paging.page, paging.page_size
    found = await reads.listed(call, node)
    count = len(found)
    body = {
        "count": count,
        "next": _page_url(call, page + 1, size) if page * size < count else None,
        "previous": _page_url(call, page - 1, size) if page > 1 else None,
        "results": [memory_json(r) for r in reads.page_of(found, page, size)],
    }
    await send_json(send, 200, body)


async def list_v2(call: Call, receive: Receive, send: Send) -> None:
    payload = await body_of(call, receive, empty={})
    request: ListRequest = validated(ListRequest, payload, status=400)
    node = reads.filter_of(call, request.filters or {})
    found = await reads.listed(call, node)
    page, size = request.page or 1, request.page_size or DEFAULT_PAGE_SIZE
    await send_json(send, 200, [memory_json(r) for r in reads.page_of(found, page, size)])


async def _search(call: Call, receive: Receive, *, v3: bool) -> list[dict[str, Any]]:
    payload = await body_of(call, receive)
    request: SearchRequest = validated(SearchRequest, payload, status=400)
    if v3:
        _no_top_level_entities(payload, "search")
    if request.filters is None:
        raise Mem0Error(400, "filters is required (e.g. {'user_id': 'alice'})")
    if not request.query.strip():
        raise Mem0Error(400, "query must not be empty")
    node = reads.filter_of(call, request.filters)
    threshold = request.threshold if request.threshold is not None else (0.1 if v3 else 0.3)
    return await reads.search(call, request.query, node, top_k=request.top_k, threshold=threshold)


async def search_v3(call: Call, receive: Receive, send: Send) -> None:
    await send_json(send, 200, {"results": await _search(call, receive, v3=True)})


async def search_v2(call: Call, receive: Receive, send: Send) -> None:
    await send_json(send, 200, await _search(call, receive, v3=False))


async def get_memory(call: Call, receive: Receive, send: Send) -> None:
    row = await reads.get(call, call.path("memory_id"))
    await send_json(send, 200, {**memory_json(row), "lifecycle_state": "active"})


async def update_memory(call: Call, receive: Receive, send: Send) -> None:
    row = await writes.update(call, call.path("memory_id"), await body_of(call, receive))
    await send_json(send, 200, memory_json(row))


async def delete_memory(call: Call, receive: Receive, send: Send) -> None:
    await writes.delete(call, call.path("memory_id"))
    await send_json(send, 200, {"message": "Memory deleted successfully!", "cascade_count": 0})


async def history(call: Call, receive: Receive, send: Send) -> None:
    await send_json(send, 200, await reads.history(call, call.path("memory_id")))


def query_entities(call: Call) -> dict[str, str]:
    """The entity ids the query string names (:class:`~memwarden.fronts.mem0.queries.EntityQuery`)."""
    return call.read(EntityQuery).named()


async def delete_all(call: Call, receive: Receive, send: Send) -> None:
    """Erase the memories of the entities named in the query (all of them: every memory of the
    bank, which needs ``admin``)."""
    count = await writes.erase_entities(call, query_entities(call))
    await send_json(send, 200, {"message": f"Memories deleted successfully! ({count})", "event_id": None})


async def entities(call: Call, receive: Receive, send: Send) -> None:
    found = await reads.entity_list(call)
    await send_json(send, 200, {"count": len(found), "results": found})


async def delete_entity(call: Call, receive: Receive, send: Send) -> None:
    kind, name = call.path("entity_type"), call.path("entity_name")
    field = ENTITY_TYPES.get(kind)
    if field is None:
        raise Mem0Error(400, f"entity type must be one of {', '.join(ENTITY_TYPES)}")
    problem = entity_problem(field, name)
    if problem is not None:
        raise Mem0Error(400, problem)
    await writes.erase_entities(call, {field: name}, missing_ok=False)
    await send_json(send, 200, {"message": "Entity deleted successfully."})


async def batch_update(call: Call, receive: Receive, send: Send) -> None:
    done = await writes.batch(call, await body_of(call, receive), deleting=False)
    updated = sum(1 for d in done if d["status"] == "updated")
    await send_json(send, 200, {"message": f"Successfully updated {updated} memories", "results": done})


async def batch_delete(call: Call, receive: Receive, send: Send) -> None:
    done = await writes.batch(call, await body_of(call, receive), deleting=True)
    deleted = sum(1 for d in done if d["status"] == "deleted")
    await send_json(send, 200, {"message": f"Successfully deleted {deleted} memories", "results": done})
