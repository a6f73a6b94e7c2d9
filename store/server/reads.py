"""The self-hosted store's answers to the rest of what a Hindsight client reads: the operations list,
a document's chunks and history, a chunk, the entities, the health probes, and the retired bank
profile routes (``410``, as Hindsight 1.1.0 answers them). Registered by
:func:`memwarden.store.server.app.create_local_app`; query parameters and bodies are
checked as FastAPI checks Hindsight's (its ``422`` words), and each answer is in Hindsight's shape
(compared with the real server's in ``tests/interop/test_interop_local.py``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from memwarden.store.errors import StoreError
from memwarden.store.local import LocalStore
from memwarden.store.shapes import API_VERSION
from memwarden.wire.asgi import BodyError, is_json_type, not_json_detail, parse_json_async, validation_detail

_AT_LEAST_0: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=0, le=2**63 - 1)])
_1_TO_100: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=1, le=100)])
_1_TO_1000: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=1, le=1000)])
_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
_TAGS_MATCH: TypeAdapter[str] = TypeAdapter(Literal["any", "all", "any_strict", "all_strict", "exact"])
_TAG_GROUPS: TypeAdapter[list[dict[str, Any]]] = TypeAdapter(list[dict[str, Any]])


Handler = Callable[[LocalStore, Request], Awaitable[Any]]  # a route of the store's app


async def json_body(request: Request) -> Any:
    """The request's JSON body (``{}`` for none), refused as Hindsight (FastAPI) refuses it."""
    raw = await request.body()
    if raw and not is_json_type(request.headers.get("content-type")):  # as Hindsight (FastAPI) answers it
        raise StoreError(422, not_json_detail(raw))
    try:
        return await parse_json_async(raw) if raw else {}
    except BodyError as exc:
        raise StoreError(exc.status, exc.detail) from None


def validated(cls: type[BaseModel], payload: Any) -> Any:
    """``payload`` validated by ``cls``; a refusal in FastAPI's 422 words."""
    try:
        return cls.model_validate(payload)
    except ValidationError as exc:
        raise StoreError(422, validation_detail(exc)) from None


def query_param(request: Request, name: str, adapter: TypeAdapter[Any], default: Any) -> Any:
    """A query parameter validated as FastAPI validates it (its 422 on a bad value)."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        raise StoreError(422, validation_detail(exc, ("query", name))) from None


def _page(request: Request, limit: TypeAdapter[int], default_limit: int) -> dict[str, int]:
    return {
        "limit": query_param(request, "limit", limit, default_limit),
        "offset": query_param(request, "offset", _AT_LEAST_0, 0),
    }


def _tag_filter(request: Request) -> dict[str, Any]:
    """The GET routes' tag filter: ``tags`` (repeated), ``tags_match``, and ``tag_groups`` as a
    JSON-encoded string (Hindsight's 400 when it is not JSON, or comes with ``tags``)."""
    tags = request.query_params.getlist("tags")
    groups = None
    raw = request.query_params.get("tag_groups")
    if raw is not None and raw.strip():
        try:
            groups = _TAG_GROUPS.validate_json(raw)
        except ValidationError as exc:
            raise StoreError(400, f"Invalid tag_groups: {exc.errors(include_url=False)}") from None
        if tags:
            raise StoreError(
                400, "'tags' and 'tag_groups' are mutually exclusive. Use 'tag_groups' for compound filtering."
            )
    return {"tags": tags, "tags_match": query_param(request, "tags_match", _TAGS_MATCH, "any"), "tag_groups": groups}


async def list_operations(store: LocalStore, request: Request) -> Any:
    q = request.query_params
    params = {
        "status": q.get("status"),
        "type": q.get("type"),
        "exclude_parents": query_param(request, "exclude_parents", _BOOL, False),
        **_page(request, _1_TO_100, 20),
    }
    return await store.list_operations(request.path_params["bank_id"], params)


async def document_chunks(store: LocalStore, request: Request) -> Any:
    page = _page(request, _1_TO_1000, 100)
    p = request.path_params
    return await store.list_chunks(p["bank_id"], p["document_id"], page["limit"], page["offset"])


async def document_history(store: LocalStore, request: Request) -> Any:
    page = _page(request, _1_TO_1000, 100)
    p = request.path_params
    return await store.document_history(p["bank_id"], p["document_id"], page["limit"], page["offset"])


async def chunk(store: LocalStore, request: Request) -> Any:
    return await store.get_chunk(request.path_params["chunk_id"])


async def attachment(store: LocalStore, request: Request) -> Any:
    """The bytes, with the media type the client declared (the proxy's route sandboxes them)."""
    media_type, data = await store.get_attachment(request.path_params["bank_id"], request.path_params["attachment_id"])
    return Response(data, media_type=media_type, headers={"Cache-Control": "private, max-age=31536000, immutable"})


async def list_entities(store: LocalStore, request: Request) -> Any:
    params = {**_page(request, _AT_LEAST_0, 100), **_tag_filter(request)}
    return await store.list_entities(request.path_params["bank_id"], params)


async def entity(store: LocalStore, request: Request) -> Any:
    p = request.path_params
    return await store.get_entity(p["bank_id"], p["entity_id"], _tag_filter(request))


# -- health probes ---------------------------------------------------------------------------------

STARTED = time.monotonic()


async def health_ready(store: LocalStore, request: Request) -> Any:
    return {"status": "healthy", "database": "connected"}


async def health_live(store: LocalStore, request: Request) -> Any:
    return {"status": "alive", "version": API_VERSION, "uptime_seconds": round(time.monotonic() - STARTED, 1)}


@functools.cache
def _hindsight_document() -> bytes:
    return resources.files("memwarden.backends").joinpath("hindsight_openapi.json").read_bytes()


async def openapi(store: LocalStore, request: Request) -> Any:
    """Hindsight 1.1.0's own OpenAPI document, as its server serves it (memwarden's, with its own
    routes, is ``GET /warden/openapi.json``)."""
    return Response(_hindsight_document(), media_type="application/json")


# -- what Hindsight 1.1.0 retired: 410 (after checking the body, as FastAPI does first) ---------------

PROFILE_GONE = (
    "The bank profile endpoints have been removed. Disposition traits and the reflect mission are bank "
    "configuration: read them from GET /v1/default/banks/{bank_id}/config as `disposition_skepticism`, "
    "`disposition_literalism`, `disposition_empathy` and `reflect_mission`, and write them with PATCH "
    "/v1/default/banks/{bank_id}/config. The `name` field this endpoint also returned was a display-only "
    "label; read it from GET /v1/default/banks."
)
BACKGROUND_GONE = (
    "The bank background endpoint has been removed. The background was folded into the reflect mission: "
    "write it with PATCH /v1/default/banks/{bank_id}/config as `reflect_mission`. That call replaces the "
    "value rather than merging into it, so read the current mission from GET "
    "/v1/default/banks/{bank_id}/config first if you relied on this endpoint's append behaviour."
)
REGENERATE_GONE = "This endpoint is deprecated. Entity observations are no longer supported."


class _Disposition(BaseModel):
    skepticism: int = Field(ge=1, le=5)
    literalism: int = Field(ge=1, le=5)
    empathy: int = Field(ge=1, le=5)


class _UpdateDisposition(BaseModel):
    disposition: _Disposition


class _AddBackground(BaseModel):
    content: str
    update_disposition: bool = True


async def _required_body(request: Request, model: type[BaseModel]) -> None:
    """The body a route requires, checked as FastAPI checks it before the handler runs."""
    raw = await request.body()
    if not raw:
        raise StoreError(422, [{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}])
    if not is_json_type(request.headers.get("content-type")):
        raise StoreError(422, not_json_detail(raw))
    try:
        payload = await parse_json_async(raw)
    except BodyError as exc:
        raise StoreError(exc.status, exc.detail) from None
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        raise StoreError(422, validation_detail(exc)) from None


async def profile(store: LocalStore, request: Request) -> Any:
    if request.method == "PUT":
        await _required_body(request, _UpdateDisposition)
    raise StoreError(410, PROFILE_GONE)


async def background(store: LocalStore, request: Request) -> Any:
    await _required_body(request, _AddBackground)
    raise StoreError(410, BACKGROUND_GONE)


async def regenerate_entity(store: LocalStore, request: Request) -> Any:
    raise StoreError(410, REGENERATE_GONE)
