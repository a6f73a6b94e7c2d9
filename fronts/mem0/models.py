"""Mem0's requests, validated: what a body must hold, and the error raised when it does not
(:class:`Mem0Error`, answered in each dialect's shape by ``fronts/mem0/errors.py``).

Both dialects share the models; where they differ (the open-source server's 422 for a body that
does not fit its model, the platform's 400) the route says which status a validation failure gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator

from memwarden.policies.tags import canonical_tag

ENTITY_FIELDS = ("user_id", "agent_id", "app_id", "run_id")
MAX_ENTITY_CHARS = 256
MAX_METADATA_BYTES = 16 * 1024
MAX_BATCH = 1000  # Mem0's limit on a batch update or delete


class Mem0Error(Exception):
    """A request Mem0 would refuse: ``status`` and the message (``detail``: FastAPI's list form of a
    validation failure, for the open-source dialect's 422)."""

    def __init__(self, status: int, message: str, detail: Any = None) -> None:
        super().__init__(message)
        self.status, self.message, self.detail = status, message, detail


def entity_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be an entity id (None: it can). It must round-trip as a tag."""
    if not isinstance(value, str):
        return f"{name} must be a string"
    if not value or len(value) > MAX_ENTITY_CHARS:
        return f"{name} must be 1 to {MAX_ENTITY_CHARS} characters"
    if any(ord(c) < 32 for c in value) or canonical_tag(f"x:{value}") != f"x:{value}":
        return f"{name} must not start or end with spaces, hold runs of spaces or control characters"
    return None


def _metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None and len(json.dumps(value, ensure_ascii=False)) > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return value


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: StrictStr
    name: StrictStr | None = None


class AddRequest(BaseModel):
    """``POST /v3/memories/add/``, ``POST /v1/memories/`` and the server's ``POST /memories``."""

    model_config = ConfigDict(extra="allow")
    messages: list[dict[str, Any]] = Field(min_length=1)
    user_id: StrictStr | None = None
    agent_id: StrictStr | None = None
    app_id: StrictStr | None = None
    run_id: StrictStr | None = None
    metadata: dict[str, Any] | None = None
    # Mem0's coercions (pydantic's, and Django REST framework's alike): "yes", "true", 1 … are true;
    # null is the default (the server passes on only the fields that are not null).
    infer: bool = True
    filters: dict[str, Any] | None = None
    async_mode: bool = True
    memory_type: StrictStr | None = None  # taken and checked as Mem0 checks it; memwarden keeps facts only
    prompt: StrictStr | None = None

    _check_metadata = field_validator("metadata")(_metadata)

    @field_validator("infer", "async_mode", mode="before")
    @classmethod
    def _null_is_default(cls, v: Any) -> Any:
        return True if v is None else v

    @field_validator("messages", mode="before")
    @classmethod
    def _one_string(cls, v: Any) -> Any:
        return [{"role": "user", "content": v}] if isinstance(v, str) else v


class UpdateRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: StrictStr | None = None
    metadata: dict[str, Any] | None = None

    _check_metadata = field_validator("metadata")(_metadata)


class BatchEntry(UpdateRequest):
    memory_id: StrictStr


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    memories: list[BatchEntry] = Field(min_length=1, max_length=MAX_BATCH)


class SearchRequest(BaseModel):
    """v3 search (``filters`` required there; the route checks) and the server's ``POST /search``."""

    model_config = ConfigDict(extra="allow")
    query: StrictStr = Field(min_length=1)
    filters: dict[str, Any] | None = None
    top_k: int = Field(10, ge=1, le=1000)
    threshold: float | None = Field(None, ge=0, le=1)


class RestSearchRequest(SearchRequest):
    """The open-source server's ``POST /search``: ``top_k`` null is its default, 0 finds nothing."""

    top_k: int = Field(10, ge=0, le=1000)

    @field_validator("top_k", mode="before")
    @classmethod
    def _null_is_default(cls, v: Any) -> Any:
        return 10 if v is None else v


class ListRequest(BaseModel):
    """v3 get_all (``filters`` required) and v2 (``page``/``page_size`` in the body)."""

    model_config = ConfigDict(extra="allow")
    filters: dict[str, Any] | None = None
    page: int | None = Field(None, ge=1)
    page_size: int | None = Field(None, ge=1, le=1000)


def validated(model: type[Any], payload: Any, *, status: int) -> Any:
    """``payload`` as ``model``; a :class:`Mem0Error` with ``status`` otherwise."""
    if not isinstance(payload, dict):
        raise Mem0Error(status, "the request body must be a JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        detail = [
            {"type": e["type"], "loc": ["body", *e["loc"]], "msg": e["msg"], "input": _short(e.get("input"))}
            for e in exc.errors(include_url=False)
        ]
        raise Mem0Error(status, f"{where}: {first['msg']}", detail) from None


def _short(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= 200 else text[:200] + "…"


def named_entities(lookup: Callable[[str], Any]) -> dict[str, str]:
    """The entity ids ``lookup`` gives (by field name; None: not named). Raises :class:`Mem0Error`
    400 for a malformed one."""
    found: dict[str, str] = {}
    for name in ENTITY_FIELDS:
        value = lookup(name)
        if value is None:
            continue
        problem = entity_problem(name, value)
        if problem is not None:
            raise Mem0Error(400, problem)
        found[name] = value
    return found


def entities_of(request: AddRequest) -> dict[str, str]:
    """The entity ids an add names: top-level, or flat in ``filters`` (both accepted)."""
    filters = request.filters or {}
    return named_entities(lambda name: v if (v := getattr(request, name)) is not None else filters.get(name))


def messages_of(request: AddRequest) -> list[Message]:
    """The messages, each with text content; a part that is not text is a 400 (nothing written)."""
    out = []
    for i, raw in enumerate(request.messages):
        if not isinstance(raw, dict):
            raise Mem0Error(400, f"messages.{i}: each message must be an object with role and content")
        if not isinstance(raw.get("content"), str):
            raise Mem0Error(
                400,
                f"messages.{i}.content: only text content is supported (a string),"
                f" got {type(raw.get('content')).__name__}",
            )
        try:
            out.append(Message.model_validate(raw))
        except ValidationError as exc:
            raise Mem0Error(400, f"messages.{i}: {exc.errors()[0]['msg']}") from None
    return out
