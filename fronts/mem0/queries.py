"""The Mem0 front's query parameters, declared once: each route reads them with
:meth:`memwarden.fronts.mem0.context.Call.read` and ``fronts/mem0/openapi.py`` lists them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memwarden.fronts.mem0.models import ENTITY_FIELDS, MAX_ENTITY_CHARS, named_entities
from memwarden.fronts.query import QueryModel

DEFAULT_PAGE_SIZE = 100


def _entity(what: str) -> Any:
    return Field(min_length=1, max_length=MAX_ENTITY_CHARS, description=f"Only the memories of this {what}")


class EntityQuery(QueryModel):
    """The entities a call is about (a blank id is refused: it names no entity, not every one)."""

    user_id: Annotated[str | None, _entity("user")] = None
    agent_id: Annotated[str | None, _entity("agent")] = None
    app_id: Annotated[str | None, _entity("app")] = None
    run_id: Annotated[str | None, _entity("run")] = None

    def names_any(self) -> bool:
        """Whether an entity is named (none: the call is about the whole bank)."""
        return any(getattr(self, name) is not None for name in ENTITY_FIELDS)

    def named(self) -> dict[str, str]:
        """The entities named, each checked as an entity id. Raises ``Mem0Error`` (400)."""
        return named_entities(lambda name: getattr(self, name))


class ServerListQuery(EntityQuery):
    """The open-source server's ``GET /memories``."""

    top_k: Annotated[int, Field(ge=1, le=1000, description="How many memories at most")] = 100


class PageQuery(QueryModel):
    """The platform's paged listing."""

    page: Annotated[int, Field(ge=1, le=1_000_000, description="The page, from 1")] = 1
    page_size: Annotated[int, Field(ge=1, le=1000, description="Memories a page")] = DEFAULT_PAGE_SIZE
