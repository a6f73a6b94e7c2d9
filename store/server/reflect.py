"""The self-hosted store's reflect, directives and mental models routes (Hindsight 1.1.0's), added to
the store's app by :func:`reflect_routes`.

They need an LLM (``[llm]``): without one every route here answers ``501`` saying so. Request
models and query parameters are checked as Hindsight checks them (its 422s); memwarden adds
limits of its own on text sizes (:data:`MAX_TEXT`, :data:`MAX_NAME`, :data:`MAX_TAGS`), as a 422
of the same shape, since every character of a query or a directive is sent to the LLM. The work is
:mod:`memwarden.store.reflect`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from starlette.requests import Request
from starlette.routing import Route

from memwarden.policies import tagfilter
from memwarden.policies.tagfilter import TagFilterError
from memwarden.store import directives, mental_models
from memwarden.store.errors import StoreError
from memwarden.store.local import LocalStore
from memwarden.store.reflect import Reflector, ReflectQuery
from memwarden.store.server.reads import Handler, json_body, query_param, validated

MAX_TEXT = 16_000  # characters of a query, its context, a source query or a directive
MAX_NAME = 256
MAX_TAGS = 64
MAX_IDS = 1000
Tag = Annotated[str, Field(max_length=512)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
FactType = Literal["world", "experience", "observation"]


class Budget(StrEnum):  # an enum, as Hindsight's: its 422 says "enum", not "literal_error"
    low = "low"
    mid = "mid"
    high = "high"


def no_llm(request: Request) -> StoreError:
    return StoreError(
        501,
        f"{request.method} {request.url.path} needs an LLM in memwarden's self-hosted mode: configure [llm]"
        " (base_url, model, api_key_env) in memwarden's config, or run memwarden in front of Hindsight",
    )


def _tag_groups(groups: list[Any] | None) -> None:
    """Hindsight's 422 for a tag group it cannot read (as a recall's)."""
    try:
        tagfilter.build(None, "any", groups)
    except TagFilterError as exc:
        detail = {"type": "value_error", "loc": ["body", "tag_groups"], "msg": f"Value error, {exc}"}
        raise StoreError(422, [{**detail, "input": groups}]) from None


class IncludeToolCalls(BaseModel):
    output: bool = True


class IncludeIn(BaseModel):
    facts: dict[str, Any] | None = None
    tool_calls: IncludeToolCalls | None = None


class ReflectIn(BaseModel):
    """``ReflectRequest``."""

    model_config = ConfigDict(extra="allow")
    query: Text
    budget: Budget = Budget.low
    context: Text | None = None
    max_tokens: int = 4096
    include: IncludeIn = Field(default_factory=IncludeIn)
    response_schema: dict[str, Any] | None = None
    tags: Tags | None = None
    tags_match: TagsMatch = "any"
    tag_groups: list[Any] | None = None
    apply_all_directives: bool = False
    fact_types: list[FactType] | None = None
    exclude_mental_models: bool = False
    exclude_mental_model_ids: Annotated[list[str], Field(max_length=MAX_IDS)] | None = None
    reflect_search_observations_max_tokens: int | None = Field(None, ge=1)
    reflect_search_observations_include_entities: bool | None = None

    @model_validator(mode="after")
    def _rules(self) -> ReflectIn:
        if not self.query.strip():
            raise ValueError("'query' must not be empty or whitespace-only.")
        if self.tags is not None and self.tag_groups is not None:
            raise ValueError("'tags' and 'tag_groups' are mutually exclusive. Use 'tag_groups' for compound filtering.")
        return self


class DirectiveIn(BaseModel):
    """``CreateDirectiveRequest``."""

    name: Name
    content: Text
    priority: int = 0
    is_active: bool = True
    tags: Tags = Field(default_factory=list)


class DirectivePatchIn(BaseModel):
    """``UpdateDirectiveRequest``."""

    name: Name | None = None
    content: Text | None = None
    priority: int | None = None
    is_active: bool | None = None
    tags: Tags | None = None


class TriggerIn(BaseModel):
    """``MentalModelTrigger``: kept as given; the store acts on its scope, budget and schema."""

    budget: Budget | None = None
    mode: Literal["full", "delta"] = "full"
    refresh_after_consolidation: bool = False
    refresh_cron: str | None = None
    full_refresh_cron: str | None = None
    min_refresh_interval_seconds: int | None = Field(None, ge=0)
    fact_types: list[FactType] | None = None
    exclude_mental_models: bool = False
    exclude_mental_model_ids: Annotated[list[str], Field(max_length=MAX_IDS)] | None = None
    tags_match: TagsMatch | None = None
    tag_groups: list[Any] | None = None
    include_chunks: bool | None = None
    recall_max_tokens: int | None = None
    recall_chunks_max_tokens: int | None = None
    reflect_search_observations_max_tokens: int | None = Field(None, ge=1)
    reflect_search_observations_include_entities: bool | None = None
    response_schema: dict[str, Any] | None = None
    keep_trace: bool = False

    def given(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class MentalModelIn(BaseModel):
    """``CreateMentalModelRequest``."""

    id: Annotated[str, Field(max_length=MAX_NAME, pattern=r"^[^/]*$")] | None = None
    name: Name
    source_query: Text
    tags: Tags = Field(default_factory=list)
    max_tokens: int = Field(2048, ge=256, le=8192)
    trigger: TriggerIn = Field(default_factory=TriggerIn)  # type: ignore[arg-type]


class MentalModelPatchIn(BaseModel):
    """``UpdateMentalModelRequest``."""

    name: Name | None = None
    source_query: Text | None = None
    max_tokens: int | None = Field(None, ge=256, le=8192)
    tags: Tags | None = None
    trigger: TriggerIn | None = None


class RefreshIn(BaseModel):
    mode: Literal["full"] | None = None


_LIMIT: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=1, le=1000)])
_OFFSET: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=0)])
_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
_LIST_MATCH: TypeAdapter[str] = TypeAdapter(Literal["any", "all", "exact"])
_DETAIL: TypeAdapter[str] = TypeAdapter(Literal["metadata", "content", "full"])


def _page(request: Request) -> dict[str, Any]:
    return {
        "tags": request.query_params.getlist("tags"),
        "tags_match": query_param(request, "tags_match", _LIST_MATCH, "any"),
        "limit": query_param(request, "limit", _LIMIT, 100),
        "offset": query_param(request, "offset", _OFFSET, 0),
    }


Route_ = Callable[[str, Handler, list[str]], Route]
BANK = "/v1/default/banks/{bank_id}"
MODEL = f"{BANK}/mental-models/{{mental_model_id}}"
# Every path here, with its methods: all of them answer 501 without an LLM.
PATHS: dict[str, list[str]] = {
    f"{BANK}/reflect": ["POST"],
    f"{BANK}/directives": ["GET", "POST"],
    f"{BANK}/directives/{{directive_id}}": ["GET", "PATCH", "DELETE"],
    f"{BANK}/mental-models": ["GET", "POST"],
    MODEL: ["GET", "PATCH", "DELETE"],
    f"{MODEL}/history": ["GET"],
    f"{MODEL}/refresh": ["POST"],
    f"{MODEL}/clear": ["POST"],
}


def reflect_routes(route: Route_, reflector: Reflector | None) -> list[Route]:
    """The routes of :data:`PATHS`, made by the store app's ``route`` (its errors, its JSON)."""

    def ready(request: Request) -> Reflector:
        if reflector is None:
            raise no_llm(request)
        return reflector

    async def reflect(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        req: ReflectIn = validated(ReflectIn, await json_body(request))
        _tag_groups(req.tag_groups)
        query = f"{req.query}\n\nAdditional context: {req.context}" if req.context else req.query
        q = ReflectQuery(
            query=query,
            budget=req.budget.value,
            max_tokens=req.max_tokens,
            tags=req.tags,
            tags_match=req.tags_match,
            tag_groups=req.tag_groups,
            fact_types=list(req.fact_types) if req.fact_types is not None else None,
            apply_all_directives=req.apply_all_directives,
            exclude_mental_models=req.exclude_mental_models,
            exclude_mental_model_ids=req.exclude_mental_model_ids or (),
            response_schema=req.response_schema,
        )
        calls = req.include.tool_calls
        return await r.reflect(
            request.path_params["bank_id"],
            q,
            facts=req.include.facts is not None,
            tool_calls=None if calls is None else calls.output,
        )

    async def directive_list(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        b = request.path_params["bank_id"]
        if request.method == "POST":
            made: DirectiveIn = validated(DirectiveIn, await json_body(request))
            return await directives.create(r.ledger, b, made.model_dump())
        active = query_param(request, "active_only", _BOOL, True)
        return await directives.list_page(r.ledger, b, active_only=active, **_page(request))

    async def directive(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        b, directive_id = request.path_params["bank_id"], request.path_params["directive_id"]
        if request.method == "GET":
            return await directives.get(r.ledger, b, directive_id)
        if request.method == "DELETE":
            return await directives.delete(r.ledger, b, directive_id)
        patch: DirectivePatchIn = validated(DirectivePatchIn, await json_body(request))
        return await directives.update(r.ledger, b, directive_id, patch.model_dump(exclude_unset=True))

    async def model_list(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        b = request.path_params["bank_id"]
        if request.method == "POST":
            made: MentalModelIn = validated(MentalModelIn, await json_body(request))
            _tag_groups(made.trigger.tag_groups)
            fields = {**made.model_dump(exclude={"trigger"}), "trigger": made.trigger.given()}
            return await r.create_model(b, fields)
        detail = query_param(request, "detail", _DETAIL, "metadata")
        query_param(request, "exclude_knowledge_pages", _BOOL, False)  # the store keeps no knowledge pages
        return await mental_models.list_page(r.ledger, b, detail=detail, **_page(request))

    async def model(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        b, model_id = request.path_params["bank_id"], request.path_params["mental_model_id"]
        if request.method == "GET":
            return await mental_models.get(r.ledger, b, model_id, query_param(request, "detail", _DETAIL, "full"))
        if request.method == "DELETE":
            return await mental_models.delete(r.ledger, b, model_id)
        patch: MentalModelPatchIn = validated(MentalModelPatchIn, await json_body(request))
        changes = patch.model_dump(exclude_unset=True, exclude={"trigger"})
        if patch.trigger is not None:
            _tag_groups(patch.trigger.tag_groups)
            changes["trigger"] = patch.trigger.given()
        return await mental_models.update(r.ledger, b, model_id, changes)

    async def model_action(store: LocalStore, request: Request) -> Any:
        r = ready(request)
        b, model_id = request.path_params["bank_id"], request.path_params["mental_model_id"]
        action = request.url.path.rstrip("/").rsplit("/", 1)[-1]
        if action == "history":
            return await mental_models.history(r.ledger, b, model_id)
        if action == "clear":
            return await mental_models.clear(r.ledger, b, model_id)
        payload = await json_body(request)
        if payload is not None:  # an optional body: none, null, or {"mode": "full"}
            validated(RefreshIn, payload)
        return await r.refresh_model(b, model_id)

    handlers = [reflect, directive_list, directive, model_list, model, model_action, model_action, model_action]
    return [route(path, handler, methods) for (path, methods), handler in zip(PATHS.items(), handlers, strict=True)]
