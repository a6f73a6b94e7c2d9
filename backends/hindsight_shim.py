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

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memwarden.backends import hindsight_json as hj
from memwarden.backends.base import BackendRejected, BackendUnavailable, MemoryBackend
from memwarden.backends.hindsight_models import BankIn, MemoryPatchIn, RetainIn, check_new_bank_id
from memwarden.backends.hindsight_router import HindsightFallback
from memwarden.backends.types import Item, MemoryQuery, TagFilter
from memwarden.wire.asgi import BodyError, is_json_type, not_json_detail, parse_json_async, validation_detail

API_VERSION = "1.1.0"
DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}
BANK = "/v1/default/banks/{bank_id}"
# A bank's profile fields the answer echoes (Mem0 keeps no bank, so none is kept: GET of a profile is
# a 501); a mission, a background or a config field would be taken as kept, so they are refused.
PROFILE = frozenset({"name", "disposition", *(f"disposition_{t}" for t in DEFAULT_DISPOSITION)})
NO_CONFIG = "memwarden in front of {kind}: {kind} has no per-bank configuration"


class Erasable(Protocol):
    async def erase_bank(self, bank_id: str) -> None: ...


Handler = Callable[[MemoryBackend, Request], Awaitable[Any]]


def _detail(status: int, detail: Any) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


_PAGE: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=0, le=2**63 - 1)])  # as Hindsight: a floor of 0
_TAGS_MATCH: TypeAdapter[str] = TypeAdapter(Literal["any", "all", "any_strict", "all_strict", "exact"])


def _query(request: Request, name: str, adapter: TypeAdapter[Any], default: Any) -> Any:
    """A query parameter validated as Hindsight (FastAPI) validates it, its 422 in FastAPI's words."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        raise BackendRejected(422, {"detail": validation_detail(exc, ("query", name))}) from None


async def _body(request: Request, model: type[BaseModel]) -> Any:
    """The JSON body validated by ``model``, refused as Hindsight (FastAPI) refuses it."""
    raw = await request.body()
    if raw and not is_json_type(request.headers.get("content-type")):
        raise BackendRejected(422, {"detail": not_json_detail(raw)})
    try:
        payload = await parse_json_async(raw) if raw else {}
    except BodyError as exc:
        raise BackendRejected(exc.status, {"detail": exc.detail}) from None
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise BackendRejected(422, {"detail": validation_detail(exc)}) from None


class RecallIn(BaseModel):
    """What a recall needs here: a query with a word in it (Hindsight's rule); the rest as sent."""

    model_config = ConfigDict(extra="allow")
    query: str
    max_tokens: int = Field(4096, ge=1)

    @field_validator("query")
    @classmethod
    def _has_words(cls, query: str) -> str:
        if not re.search(r"\w", query):
            raise ValueError("query must contain at least one word")
        return query


def _memory_id(request: Request) -> str:
    memory_id: str = request.path_params["memory_id"]
    try:
        uuid.UUID(memory_id)
    except ValueError:
        raise BackendRejected(400, {"detail": f"Invalid memory_id: '{memory_id}' is not a valid UUID"}) from None
    return memory_id


async def health(backend: MemoryBackend, request: Request) -> Any:
    checked = await backend.health()
    if not checked.healthy:
        return _detail(503, f"{backend.kind}: {checked.detail}")
    return {"status": "healthy", "backend": backend.kind}


async def version(backend: MemoryBackend, request: Request) -> Any:
    return {"api_version": API_VERSION, "features": {"observations": False, "mcp": False, "worker": False}}


async def put_bank(backend: MemoryBackend, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    try:
        check_new_bank_id(bank)  # Mem0 keeps no banks: every bank is created anew here, as Hindsight checks it
    except ValueError as exc:
        return _detail(400, str(exc))
    fields: BankIn = await _body(request, BankIn)
    config = sorted(k for k, v in fields.model_dump(exclude_unset=True).items() if k not in PROFILE and v is not None)
    if config:  # a mission, a background, a config field: Mem0 has nowhere to keep them
        return _detail(501, f"{NO_CONFIG.format(kind=backend.kind)}: {', '.join(config)} cannot be set")
    disposition = dict(DEFAULT_DISPOSITION)
    if fields.disposition is not None:
        disposition.update(fields.disposition.model_dump())
    for trait in DEFAULT_DISPOSITION:
        if (value := getattr(fields, f"disposition_{trait}")) is not None:
            disposition[trait] = value
    return {
        "bank_id": bank,
        "name": fields.name if fields.name is not None else bank,
        "disposition": disposition,
        "mission": "",
        "background": None,
    }


async def config(backend: MemoryBackend, request: Request) -> Any:
    return _detail(501, f"{NO_CONFIG.format(kind=backend.kind)}; the config guard has nothing to guard here")


async def delete_bank(backend: MemoryBackend, request: Request) -> Any:
    """``DELETE`` a bank, or its memories (``?type=``: of one kind only — the backend's memories
    are all ``world`` facts, so another kind deletes nothing)."""
    kind = request.query_params.get("type")
    if request.url.path.endswith("/memories") and kind not in (None, "world"):
        return {"success": True, "message": f"No {kind} memories here", "deleted_count": 0}
    erase: Erasable | None = backend if hasattr(backend, "erase_bank") else None  # type: ignore[assignment]
    if erase is None:
        return _detail(501, f"memwarden in front of {backend.kind}: a bank cannot be deleted whole")
    await erase.erase_bank(request.path_params["bank_id"])
    return {"success": True, "message": "Bank deleted", "deleted_count": None}


async def retain(backend: MemoryBackend, request: Request) -> Any:
    """A retain not governed (a bank in ``shadow`` or ``off`` mode): checked as Hindsight checks it,
    then stored as sent."""
    req: RetainIn = await _body(request, RetainIn)
    bank = request.path_params["bank_id"]
    items = [Item.from_json(i.model_dump(exclude_unset=True, by_alias=True)) for i in req.items]
    receipt = await backend.retain(bank, items, document_tags=tuple(req.document_tags or ()), wait=not req.is_async)
    return hj.receipt_json(bank, receipt)


async def recall(backend: MemoryBackend, request: Request) -> Any:
    """A recall not governed: Hindsight's body read into a query, the backend's hits in its shape."""
    req: RecallIn = await _body(request, RecallIn)
    recalled = await backend.recall(request.path_params["bank_id"], hj.recall_query_from_json(req.model_dump()))
    return hj.recalled_json(recalled)


async def list_memories(backend: MemoryBackend, request: Request) -> Any:
    q = request.query_params
    limit, offset = _query(request, "limit", _PAGE, 100), _query(request, "offset", _PAGE, 0)
    match = _query(request, "tags_match", _TAGS_MATCH, None)
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
    memory_id = _memory_id(request)
    if request.method == "PATCH":  # checked as Hindsight checks it; then what Mem0 cannot do
        await _body(request, MemoryPatchIn)
        return _detail(501, f"memwarden in front of {backend.kind}: {backend.kind} has no memory states or edits here")
    return hj.memory_json(await backend.get_memory(request.path_params["bank_id"], memory_id))


async def list_documents(backend: MemoryBackend, request: Request) -> Any:
    limit, offset = _query(request, "limit", _PAGE, 100), _query(request, "offset", _PAGE, 0)
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
    """Hindsight's routes answered from ``backend``; the rest as Hindsight's router answers it, a
    documented operation the backend cannot serve a 501 naming it."""

    def lacking(method: str, template: str) -> str:
        return (
            f"memwarden in front of {backend.kind}: {method} {template} has no {backend.kind} equivalent"
            " (Hindsight's retain, recall, memories, documents, stats and banks are served)"
        )

    fallback = HindsightFallback(lacking)
    routes: list[Route] = []
    table: tuple[tuple[str, Handler | None, list[str]], ...] = (
        ("/health", health, ["GET"]),
        ("/health/ready", health, ["GET"]),
        ("/health/live", health, ["GET"]),
        ("/version", version, ["GET"]),
        (BANK, put_bank, ["PUT", "PATCH"]),
        (BANK, delete_bank, ["DELETE"]),
        (f"{BANK}/memories", delete_bank, ["DELETE"]),
        (f"{BANK}/memories", retain, ["POST"]),
        (f"{BANK}/memories/recall", recall, ["POST"]),
        (f"{BANK}/memories/list", list_memories, ["GET"]),
        (f"{BANK}/memories/{{memory_id}}", memory, ["GET", "PATCH"]),
        (f"{BANK}/documents", list_documents, ["GET"]),
        (f"{BANK}/documents/{{document_id:path}}/chunks", None, ["GET"]),  # Hindsight's before …/{document_id}
        (f"{BANK}/documents/{{document_id:path}}/history", None, ["GET"]),
        (f"{BANK}/documents/{{document_id:path}}", document, ["GET", "DELETE"]),
        (f"{BANK}/stats", stats, ["GET"]),
        (f"{BANK}/config", config, ["GET", "PATCH", "DELETE"]),
    )
    for path, handler, methods in table:
        route = Route(path, fallback, methods=methods) if handler is None else _route(backend, path, handler, methods)
        route.methods = set(methods)  # as Hindsight's (FastAPI's) routes: no HEAD added to a GET
        routes.append(route)
    routes.append(Route("/{rest:path}", fallback))
    return Starlette(routes=routes)
