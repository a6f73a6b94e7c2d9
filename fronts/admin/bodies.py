"""The request bodies of memwarden's own API that have a model: each handler reads its body with
:func:`memwarden.wire.asgi.read_model` (a 422 in FastAPI's shape otherwise), and
``fronts/admin/openapi.py`` writes the same model into the OpenAPI document."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator
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


class KeyBody(BaseModel):
    """A new API key: what it is for and the banks it may read, write and administer."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: Annotated[str, Field(description="What the key is for (1 to 100 characters)")]
    read: Annotated[list[str], Field(description="Bank patterns it may read (`*` for every bank)")] = []
    write: Annotated[list[str], Field(description="Bank patterns it may write (and read)")] = []
    admin: Annotated[list[str], Field(description="Bank patterns it may administer")] = []
    expires_in_days: Annotated[float | None, Field(gt=0, description="It stops working after this many days")] = None


class AcknowledgeBody(BaseModel):
    """An operator has looked at the audit chain's alarms."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    reason: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=2000),
        Field(description="What was looked at (audited; a secret in it is masked)"),
    ]


class PlanOperation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    op: Literal["archive", "restore", "approve", "reject"]
    memory_id: Annotated[str, Field(max_length=200)]


def _utc(value: str | None) -> str | None:
    """An ISO 8601 time with its offset, as the ledger keeps times (UTC, ``+00:00``)."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("an ISO 8601 date and time, with its offset (2026-12-06T05:00:00Z)") from None
    if when.tzinfo is None:
        raise ValueError("a time needs its offset (Z or +hh:mm): the ledger's times are UTC")
    try:
        return when.astimezone(UTC).isoformat()
    except OverflowError:  # 0001-01-01T00:00:00+05:00: before the calendar's first day in UTC
        raise ValueError("a time within the calendar's years 1 to 9999 in UTC") from None


class WrittenBy(BaseModel):
    """What one writer wrote in a window: an API key's id (``writer``), a ``channel``, or one
    request (``request_id``) — at least one — and the window (``since``, ``until``; either open)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    writer: Annotated[str | None, Field(min_length=1, max_length=200, description="An API key's id")] = None
    channel: Annotated[Literal["hindsight", "mem0", "mcp"] | None, Field(description="The front it came through")] = (
        None
    )
    request_id: Annotated[str | None, Field(min_length=1, max_length=200, description="One request's id")] = None
    since: Annotated[str | None, Field(max_length=64, description="From this time (ISO 8601 with its offset)")] = None
    until: Annotated[str | None, Field(max_length=64, description="Up to this time (ISO 8601 with its offset)")] = None

    @field_validator("since", "until")
    @classmethod
    def _a_time(cls, value: str | None) -> str | None:
        return _utc(value)

    @model_validator(mode="after")
    def _someone(self) -> WrittenBy:
        if self.writer is None and self.channel is None and self.request_id is None:
            raise ValueError("name a writer, a channel or a request_id: an undo of everything is not a plan")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since is after until")
        return self


class PlanBody(BaseModel):
    """A plan: its operations, ``from: cleanup`` (the cleanup report's plannable candidates), or
    ``written_by`` (archive what one writer, channel or request wrote in a window: an undo)."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    operations: Annotated[
        list[PlanOperation] | None, Field(description="What to do, in order (up to 1000 operations)")
    ] = None
    source: Annotated[
        Literal["cleanup"] | None,
        Field(alias="from", description="Plan the cleanup report's candidates instead of `operations`"),
    ] = None
    written_by: Annotated[
        WrittenBy | None,
        Field(description="Archive the active memories one writer, channel or request wrote in a window"),
    ] = None
    reason: Annotated[str | None, Field(max_length=2000, description="Why (stored and audited, secrets masked)")] = None


class ApplyBody(BaseModel):
    """A plan's confirmation."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    phrase: Annotated[str | None, Field(description="The plan's confirmation phrase, exactly")] = None


class RetentionBody(BaseModel):
    """A retention run's options in the body (the query string's, as JSON); an empty body is none."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    dry_run: Annotated[bool, Field(description="Only list what would go")] = False
    bank: Annotated[str | None, Field(description="Only this bank")] = None
