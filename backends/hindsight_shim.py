"""Hindsight 1.1.0's API over a backend that does not speak it (Mem0): the pass-through half of
memwarden in front of such a backend.

The Hindsight front governs retain and recall itself, in neutral types; every other route it
passes through, and in front of Mem0 it passes them here, in process (as in front of its own store
it passes them to the store's Hindsight app). What the backend can answer is answered in
Hindsight's shapes — health and version, a bank's profile (Mem0 needs no bank created: the answer
is the default profile), its memories listed and fetched, its documents listed, fetched and
deleted, its stats, the bank or its memories deleted — and every other route is a 501 that names
what the backend lacks, so a client learns it at once and nothing is half done.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memwarden.backends import hindsight_json as hj
from memwarden.backends.base import BackendRejected, BackendUnavailable, MemoryBackend
from memwarden.backends.types import MemoryQuery, TagFilter

API_VERSION = "1.1.0"
DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}
BANK = "/v1/default/banks/{bank_id}"
TAGS_MATCH = ("any", "all", "any_strict", "all_strict", "exact")
PROFILE = frozenset(
    {"name", "mission", "background", "disposition", *(f"disposition_{t}" for t in DEFAULT_DISPOSITION)}
)
NO_CONFIG = "memwarden in front of {kind}: {kind} has no per-bank configuration"


class Erasable(Protocol):
    async def erase_bank(self, bank_id: str) -> None: ...


Handler = Callable[[MemoryBackend, Request], Awaitable[Any]]


def _detail(status: int, detail: Any) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def _int(request: Request, name: str, default: int, *, low: int = 0, high: int = 10_000) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BackendRejected(422, {"detail": f"{name} must be an integer"}) from None
    if not low <= value <= high:
        raise BackendRejected(422, {"detail": f"{name} must be between {low} and {high}"})
    return value


async def health(backend: MemoryBackend, request: Request) -> Any:
    checked = await backend.health()
    if not checked.healthy:
        return _detail(503, f"{backend.kind}: {checked.detail}")
    return {"status": "healthy", "backend": backend.kind}


async def version(backend: MemoryBackend, request: Request) -> Any:
    return {"api_version": API_VERSION, "features": {"observations": False, "mcp": False, "worker": False}}


async def put_bank(backend: MemoryBackend, request: Request) -> Any:
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        return _detail(422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON decode error"}])
    fields = body if isinstance(body, dict) else {}
    config = sorted(k for k, v in fields.items() if k not in PROFILE and v is not None)
    if config:  # a bank's config (a mission, extraction settings): Mem0 has none to keep it in
        return _detail(501, f"{NO_CONFIG.format(kind=backend.kind)}: {', '.join(config)} cannot be set")
    bank = request.path_params["bank_id"]
    disposition = fields.get("disposition") if isinstance(fields.get("disposition"), dict) else DEFAULT_DISPOSITION
    return {
        "bank_id": bank,
        "name": fields.get("name") if isinstance(fields.get("name"), str) else bank,
        "disposition": disposition,
        "mission": fields.get("mission") if isinstance(fields.get("mission"), str) else "",
        "background": fields.get("background") if isinstance(fields.get("background"), str) else None,
    }


async def config(backend: MemoryBackend, request: Request) -> Any:
    return _detail(501, f"{NO_CONFIG.format(kind=backend.kind)}; the config guard has nothing to guard here")


async def delete_bank(backend: MemoryBackend, request: Request) -> Any:
    erase: Erasable | None = backend if hasattr(backend, "erase_bank") else None  # type: ignore[assignment]
    if erase is None:
        return _detail(501, f"memwarden in front of {backend.kind}: a bank cannot be deleted whole")
    await erase.erase_bank(request.path_params["bank_id"])
    return {"success": True, "message": "Bank deleted", "deleted_count": None}


async def list_memories(backend: MemoryBackend, request: Request) -> Any:
    q = request.query_params
    limit, offset = _int(request, "limit", 100, low=1, high=1000), _int(request, "offset", 0, high=10**9)
    match = q.get("tags_match")
    if match is not None and match not in TAGS_MATCH:
        return _detail(422, f"tags_match must be one of {', '.join(TAGS_MATCH)}")
    query = MemoryQuery(
        document_id=q.get("document_id"),
        state=q.get("state"),
        tags=TagFilter(tuple(q.getlist("tags")), match),
        limit=limit,
        offset=offset,
    )
    page = await backend.list_memories(request.path_params["bank_id"], query)
    return hj.page_json(page, hj.listed_memory_json, limit=limit, offset=offset)


async def memory(backend: MemoryBackend, request: Request) -> Any:
    found = await backend.get_memory(request.path_params["bank_id"], request.path_params["memory_id"])
    return hj.memory_json(found)


async def list_documents(backend: MemoryBackend, request: Request) -> Any:
    limit, offset = _int(request, "limit", 100, low=1, high=1000), _int(request, "offset", 0, high=10**9)
    page = await backend.list_documents(request.path_params["bank_id"], limit=limit, offset=offset)
    return hj.page_json(page, hj.document_json, limit=limit, offset=offset)


async def document(backend: MemoryBackend, request: Request) -> Any:
    bank, document_id = request.path_params["bank_id"], request.path_params["document_id"]
    if request.method == "DELETE":
        await backend.delete_document(bank, document_id)
        return {"success": True, "message": f"Document '{document_id}' deleted", "deleted_count": None}
    return hj.document_json(await backend.get_document(bank, document_id))


async def stats(backend: MemoryBackend, request: Request) -> Any:
    return hj.stats_json(await backend.stats(request.path_params["bank_id"]))


def _route(backend: MemoryBackend, path: str, handler: Handler, methods: list[str]) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            answer = await handler(backend, request)
        except BackendRejected as exc:
            return JSONResponse(exc.body, status_code=exc.status)
        except BackendUnavailable as exc:
            return _detail(502, str(exc))
        return answer if isinstance(answer, Response) else JSONResponse(answer)

    return Route(path, endpoint, methods=methods)


def create_shim_app(backend: MemoryBackend) -> Starlette:
    """Hindsight's routes answered from ``backend``; the rest a 501 naming what it lacks."""

    async def lacking(request: Request) -> Response:
        return _detail(
            501,
            f"memwarden in front of {backend.kind}: {request.method} {request.url.path} has no {backend.kind}"
            " equivalent (Hindsight's retain, recall, memories, documents, stats and banks are served)",
        )

    routes = [
        _route(backend, path, handler, methods)
        for path, handler, methods in (
            ("/health", health, ["GET"]),
            ("/health/ready", health, ["GET"]),
            ("/health/live", health, ["GET"]),
            ("/version", version, ["GET"]),
            (BANK, put_bank, ["PUT", "PATCH"]),
            (BANK, delete_bank, ["DELETE"]),
            (f"{BANK}/memories", delete_bank, ["DELETE"]),
            (f"{BANK}/memories/list", list_memories, ["GET"]),
            (f"{BANK}/memories/{{memory_id}}", memory, ["GET"]),
            (f"{BANK}/documents", list_documents, ["GET"]),
            (f"{BANK}/documents/{{document_id:path}}", document, ["GET", "DELETE"]),
            (f"{BANK}/stats", stats, ["GET"]),
            (f"{BANK}/config", config, ["GET", "PATCH", "DELETE"]),
        )
    ]
    routes.append(Route("/{path:path}", lacking, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]))
    return Starlette(routes=routes)
