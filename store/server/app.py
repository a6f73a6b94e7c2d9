"""The Hindsight 1.1.0 HTTP API over the self-hosted store.

memwarden's proxy talks to this app exactly as it talks to a Hindsight server (in process, through
``httpx.ASGITransport``), so governance, the config guard and the pass-through work unchanged.
Shapes, status codes and error bodies are Hindsight's (checked against the real server by
``tests/interop/test_interop_local.py``). The reads a Hindsight client makes beyond these are
``store/server/reads.py``'s; reflect, directives and mental models are served with an LLM
(``store/server/reflect.py``; without ``[llm]`` they answer ``501`` saying to configure
it); a bank's export and import are ``store/server/transfer.py``'s. What no route here
serves is answered as Hindsight's router answers it by ``store/server/fallback.py``:
``501`` for a documented operation that needs an LLM or is not built here (saying which),
``405``/``404``/``307`` as Hindsight does.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memwarden.backends import hindsight_json as hj
from memwarden.backends.hindsight_models import BankIn, MemoryPatchIn, RetainIn
from memwarden.backends.types import Item, MemoryQuery, TagFilter
from memwarden.policies import tagfilter
from memwarden.policies.tagfilter import TagFilterError
from memwarden.store import rules
from memwarden.store.errors import StoreError, storage_failure
from memwarden.store.local import LocalStore
from memwarden.store.server import reads
from memwarden.store.server import transfer as store_transfer
from memwarden.store.server.fallback import fallback_route, not_built
from memwarden.store.server.reads import Handler, json_body, query_param, validated
from memwarden.store.server.reflect import reflect_routes
from memwarden.store.shapes import API_VERSION, FEATURES
from memwarden.wire.asgi import dumps

if TYPE_CHECKING:
    from memwarden.store.reflect import Reflector

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]  # policies.tagfilter.MODES


class _ChunksIn(BaseModel):
    max_tokens: int = 8192


class _IncludeIn(BaseModel):
    """Hindsight's ``IncludeOptions``: what a recall answers beside its results — ``entities`` (by
    default), ``chunks`` and ``source_facts`` when asked (store/recall.py)."""

    model_config = ConfigDict(extra="allow")
    entities: dict[str, Any] | None = {"max_tokens": 500}
    chunks: _ChunksIn | None = None
    source_facts: dict[str, Any] | None = None


class RecallIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    include: _IncludeIn = _IncludeIn()
    query: str
    types: list[str] | None = None
    budget: Literal["low", "mid", "high"] = "mid"
    max_tokens: int = 4096
    trace: bool = False
    tags: list[str] | None = None
    tags_match: TagsMatch = "any"
    tag_groups: list[dict[str, Any]] | None = None
    query_timestamp: str | None = None

    @field_validator("query")
    @classmethod
    def _has_words(cls, query: str) -> str:
        if not rules.query_has_words(query):
            raise ValueError("query must contain at least one word character after normalization")
        return query

    @model_validator(mode="after")
    def _one_tag_filter(self) -> RecallIn:
        if self.tags is not None and self.tag_groups is not None:
            raise ValueError("'tags' and 'tag_groups' are mutually exclusive. Use 'tag_groups' for compound filtering.")
        return self


class ConfigIn(BaseModel):
    updates: dict[str, Any]


class DocumentPatchIn(BaseModel):
    """``UpdateDocumentRequest`` (the store keeps no observation scopes)."""

    tags: list[str] | None = None


# Hindsight's query parameters, validated by pydantic as FastAPI validates them (so its errors are
# FastAPI's): paging has a floor of 0 and no ceiling but SQLite's.
_PAGE: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=0, le=2**63 - 1)])
_TAGS_MATCH: TypeAdapter[str] = TypeAdapter(TagsMatch)


def _int(request: Request, name: str, default: int) -> int:
    """A paging parameter (``limit``, ``offset``)."""
    value: int = query_param(request, name, _PAGE, default)
    return value


def json_response(payload: Any, status: int = 200) -> Response:
    """Every answer of the store, written by ``memwarden.wire.asgi.dumps`` (orjson)."""
    return Response(dumps(payload), status_code=status, media_type="application/json")


def create_local_app(store: LocalStore, reflector: Reflector | None = None) -> Starlette:
    """The app; ``reflector`` serves reflect, directives and mental models (None: no ``[llm]``, 501)."""

    def route(path: str, handler: Handler, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                result = await handler(store, request)
            except StoreError as exc:
                return json_response({"detail": exc.detail}, exc.status)
            except Exception as exc:
                failure = storage_failure(exc)
                if failure is None:
                    raise
                return json_response({"detail": failure.detail}, failure.status)
            return result if isinstance(result, Response) else json_response(result)

        served = Route(path, endpoint, methods=methods)
        served.methods = set(methods)  # as Hindsight's (FastAPI's) routes: no HEAD added to a GET
        return served

    bank = "/v1/default/banks/{bank_id}"
    routes = [
        route("/health", health, ["GET"]),
        route("/version", version, ["GET"]),
        route("/v1/version", version, ["GET"]),
        route("/v1/default/banks", list_banks, ["GET"]),
        route(bank, put_bank, ["PUT", "PATCH"]),
        route(bank, delete_bank, ["DELETE"]),
        route(f"{bank}/config", config, ["GET", "PATCH", "DELETE"]),
        route(f"{bank}/memories", retain, ["POST"]),
        route(f"{bank}/memories", wipe, ["DELETE"]),
        route(f"{bank}/memories/list", list_memories, ["GET"]),
        route(f"{bank}/memories/recall", recall, ["POST"]),
        route(f"{bank}/memories/{{memory_id}}/history", memory_history, ["GET"]),
        route(f"{bank}/memories/{{memory_id}}", memory, ["GET", "PATCH"]),
        route(f"{bank}/documents", list_documents, ["GET"]),
        route(f"{bank}/documents/{{document_id:path}}/chunks", reads.document_chunks, ["GET"]),
        route(f"{bank}/documents/{{document_id:path}}/history", reads.document_history, ["GET"]),
        route(f"{bank}/documents/{{document_id:path}}", document, ["GET", "PATCH", "DELETE"]),
        route("/v1/default/chunks/{chunk_id:path}", reads.chunk, ["GET"]),
        route(f"{bank}/attachments/{{attachment_id}}", reads.attachment, ["GET"]),
        route(f"{bank}/tags", tags, ["GET"]),
        route(f"{bank}/stats", stats, ["GET"]),
        route(f"{bank}/operations", reads.list_operations, ["GET"]),
        route(f"{bank}/operations/{{operation_id}}", operation, ["GET"]),
        *(route(path, handler, methods) for path, handler, methods in store_transfer.ROUTES),
        *reflect_routes(route, reflector),
        route(f"{bank}/entities", reads.list_entities, ["GET"]),
        route(f"{bank}/entities/{{entity_id}}/regenerate", reads.regenerate_entity, ["POST"]),
        not_built(f"{bank}/entities/graph", ["GET"]),  # Hindsight's comes before …/{entity_id}
        route(f"{bank}/entities/{{entity_id}}", reads.entity, ["GET"]),
        route(f"{bank}/profile", reads.profile, ["GET", "PUT"]),
        route(f"{bank}/background", reads.background, ["POST"]),
        route("/health/ready", reads.health_ready, ["GET"]),
        route("/health/live", reads.health_live, ["GET"]),
        route("/openapi.json", reads.openapi, ["GET", "HEAD"]),
    ]
    routes.append(fallback_route())  # the rest: Hindsight's 501, 405, 404
    return Starlette(routes=routes)


async def health(store: LocalStore, request: Request) -> Any:
    return {"status": "healthy", "database": "connected"}


async def version(store: LocalStore, request: Request) -> Any:
    return {"api_version": API_VERSION, "features": FEATURES}


async def list_banks(store: LocalStore, request: Request) -> Any:
    return await store.list_banks(
        request.query_params.get("q"), _int(request, "limit", 100), _int(request, "offset", 0)
    )


async def put_bank(store: LocalStore, request: Request) -> Any:
    payload = await json_body(request)
    if not isinstance(payload, dict):
        raise StoreError(422, [{"type": "dict_type", "loc": ["body"], "msg": "Input should be a valid dictionary"}])
    fields: BankIn = validated(BankIn, payload)
    return await store.put_bank(request.path_params["bank_id"], fields.model_dump(exclude_unset=True))


async def delete_bank(store: LocalStore, request: Request) -> Any:
    return await store.delete_bank(request.path_params["bank_id"])


async def config(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    if request.method == "GET":
        answer = await store.get_config(bank)
    elif request.method == "DELETE":
        answer = await store.reset_config(bank)
    else:
        update: ConfigIn = validated(ConfigIn, await json_body(request))
        answer = await store.patch_config(bank, update.updates)
    return hj.config_json(bank, answer)


async def retain(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    req: RetainIn = validated(RetainIn, await json_body(request))
    items = [Item.from_json(i.model_dump()) for i in req.items]
    receipt = await store.retain_request(bank, items, list(req.document_tags or []), wait=not req.is_async)
    return hj.receipt_json(bank, receipt)


async def wipe(store: LocalStore, request: Request) -> Any:
    return await store.delete_units(request.path_params["bank_id"], request.query_params.get("type"))


def _tags_of(request: Request) -> TagFilter:
    match = query_param(request, "tags_match", _TAGS_MATCH, None)
    return TagFilter(tuple(request.query_params.getlist("tags")), match)


async def list_memories(store: LocalStore, request: Request) -> Any:
    q = request.query_params
    limit, offset = _int(request, "limit", 100), _int(request, "offset", 0)  # checked first, as Hindsight
    query = MemoryQuery(
        document_id=q.get("document_id"), state=q.get("state"), tags=_tags_of(request), limit=limit, offset=offset
    )
    page = await store.list_units(request.path_params["bank_id"], query, kind=q.get("type"), contains=q.get("q"))
    return hj.page_json(page, hj.listed_memory_json, limit=query.limit, offset=query.offset)


def recall_request(payload: Any) -> dict[str, Any]:
    """A recall body validated as Hindsight validates it: its model (422), its query timestamp
    (400), its tag groups (422) and its fact types (422). A query of any length is taken, as
    Hindsight takes it; only its first 510 tokens are embedded."""
    req: RecallIn = validated(RecallIn, payload)
    if req.query_timestamp:
        try:
            datetime.fromisoformat(req.query_timestamp.replace("Z", "+00:00"))
        except ValueError as exc:
            raise StoreError(
                400, f"Invalid query_timestamp format. Expected ISO format (e.g., '2023-05-30T23:40:00'): {exc}"
            ) from None
    try:
        tagfilter.build(req.tags, req.tags_match, req.tag_groups)
    except TagFilterError as exc:
        detail = {"type": "value_error", "loc": ["body", "tag_groups"], "msg": f"Value error, {exc}"}
        raise StoreError(422, [{**detail, "input": req.tag_groups}]) from None
    try:
        types = rules.recall_types(req.types)
    except ValueError as exc:
        raise StoreError(422, str(exc)) from None
    return {**req.model_dump(), "types": types}


async def recall(store: LocalStore, request: Request) -> Any:
    query = hj.recall_query_from_json(recall_request(await json_body(request)))
    return hj.recalled_json(await store.recall(request.path_params["bank_id"], query))


async def memory(store: LocalStore, request: Request) -> Any:
    bank, memory_id = request.path_params["bank_id"], request.path_params["memory_id"]
    if request.method == "GET":
        return hj.memory_json(await store.get_unit(bank, memory_id))
    patch: MemoryPatchIn = validated(MemoryPatchIn, await json_body(request))
    return hj.memory_json(await store.update_unit(bank, memory_id, patch.model_dump(exclude_unset=True)))


async def memory_history(store: LocalStore, request: Request) -> Any:
    return await store.unit_history(request.path_params["bank_id"], request.path_params["memory_id"])


async def list_documents(store: LocalStore, request: Request) -> Any:
    limit, offset = _int(request, "limit", 100), _int(request, "offset", 0)
    page = await store.list_documents(
        request.path_params["bank_id"],
        limit=limit,
        offset=offset,
        q=request.query_params.get("q"),
        tags=_tags_of(request),
    )
    return hj.page_json(page, hj.document_json, limit=limit, offset=offset, total_is_estimate=False)


async def document(store: LocalStore, request: Request) -> Any:
    bank, document_id = request.path_params["bank_id"], request.path_params["document_id"]
    if request.method == "GET":
        return hj.document_json(await store.get_document(bank, document_id))
    if request.method == "DELETE":
        return await store.delete_document(bank, document_id)
    update: DocumentPatchIn = validated(DocumentPatchIn, await json_body(request))
    if update.tags is None:
        raise StoreError(422, "At least one field (tags, observation_scopes) must be provided")
    return await store.update_document_tags(bank, document_id, update.tags)


async def tags(store: LocalStore, request: Request) -> Any:
    return await store.tags(
        request.path_params["bank_id"],
        request.query_params.get("q"),
        _int(request, "limit", 100),
        _int(request, "offset", 0),
    )


async def stats(store: LocalStore, request: Request) -> Any:
    return hj.stats_json(await store.stats(request.path_params["bank_id"]))


async def operation(store: LocalStore, request: Request) -> Any:
    return await store.operation(request.path_params["bank_id"], request.path_params["operation_id"])
