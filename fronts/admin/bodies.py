"""The request bodies of memwarden's own API that have a model: each handler reads its body with
:func:`memwarden.wire.asgi.read_model` (a 422 in FastAPI's shape otherwise), and
``fronts/admin/openapi.py`` writes the same model into the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError


class ReasonBody(BaseModel):
    """An operator's change to one memory (archive, restore), and why."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    reason: Annotated[
        str | None, Field(max_length=2000, description="Why: stored and audited (a secret in it is masked)")
    ] = None


class FeedbackBody(ReasonBody):
    """An operator's vote on a memory."""

    score: Annotated[Literal[1, -1], Field(description="Up (1) or down (-1)")]

    @field_validator("score", mode="before")
    @classmethod
    def _an_integer(cls, value: Any) -> Any:
        if type(value) is not int:  # not true, not 1.0, not "1"
            raise PydanticCustomError("literal_error", "Input should be 1 or -1")
        return value
