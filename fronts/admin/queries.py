"""The query parameters of memwarden's own API, declared once: each handler reads its query with
:func:`memwarden.fronts.query.read_query`, and ``fronts/openapi_paths.py`` lists the same
declarations as the routes' parameters."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from memwarden.db.memory_reads import STATUSES
from memwarden.db.outbox import STATES
from memwarden.fronts.query import MAX_OFFSET, Choices, CommaSeparated, QueryModel

MAX_LIMIT = 1000


class Page(QueryModel):
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Page size")] = 100
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="Rows to skip")] = 0


class OutboxQuery(Page):
    state: Annotated[str | None, Choices(STATES), Field(description="Only entries in this state")] = None
    bank: Annotated[str | None, Field(description="Only this bank's")] = None


class LedgerListing(Page):
    status: Annotated[
        tuple[str, ...], Choices(STATUSES), CommaSeparated(), Field(description="Statuses (comma-separated)")
    ] = ()
    topic: Annotated[str | None, Field(description="Topic label")] = None
    stage: Annotated[str | None, Field(description="Stage label")] = None
    topic_key: Annotated[str | None, Field(description="Topic key")] = None
    tag: Annotated[tuple[str, ...], Field(description="A tag, either spelling (repeatable: every one)")] = ()
    q: Annotated[str | None, Field(description="Text the content holds")] = None
    after: Annotated[
        str | None, Field(max_length=2000, description="The page after this cursor (a listing's `next`)")
    ] = None


class OverviewQuery(QueryModel):
    days: Annotated[int, Field(ge=1, le=366, description="The growth chart's window, in days")] = 30
    status: Annotated[
        tuple[str, ...],
        Choices(STATUSES),
        CommaSeparated(),
        Field(description="Statuses the label counts include (comma-separated)"),
    ] = ("active",)


class HealthQuery(QueryModel):
    days: Annotated[int, Field(ge=1, le=3650, description="Window, in days")] = 7


class RetentionQuery(QueryModel):
    dry_run: Annotated[bool, Field(description="Only list what would go")] = False
    bank: Annotated[str | None, Field(description="Only this bank")] = None


class RollbackQuery(QueryModel):
    preview: Annotated[bool, Field(description="Change nothing: only say what the rollback would do")] = False


class RevokeQuery(QueryModel):
    reason: Annotated[str | None, Field(max_length=500, description="Why: audited (a secret in it is masked)")] = None


class AuditFilters(QueryModel):
    bank: Annotated[str | None, Field(description="Only this bank's events")] = None
    action: Annotated[str | None, Field(description="Only these actions (comma-separated)")] = None
    since: Annotated[
        str | None,
        Field(max_length=64, description="A sequence number (events after it) or an ISO timestamp (at or after it)"),
    ] = None


class AuditQuery(AuditFilters):
    limit: Annotated[int, Field(ge=1, le=1000, description="How many events at most")] = 100
    tail: Annotated[int | None, Field(ge=1, le=1000, description="The latest N events instead")] = None


class AuditStreamQuery(AuditFilters):
    last_event_id: Annotated[
        str | None, Field(max_length=18, description="Resume after this sequence number (or Last-Event-ID)")
    ] = None
