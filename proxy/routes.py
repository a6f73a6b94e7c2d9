"""The route table: memwarden's own routes, the governed Hindsight routes, and the pass-through.

Governed routes (retain, bank config, bank create/update, the destructive DELETEs, recall) have
named handlers; every other path — any method — streams through to the backend untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from memwarden.fronts.admin.audit import list_audit, stream_audit, verify_audit
from memwarden.fronts.admin.explain import explain
from memwarden.fronts.admin.health import warden_health
from memwarden.fronts.admin.memories import (
    archive_memory,
    list_ledger_memories,
    memory_detail,
    memory_feedback,
    restore_memory,
)
from memwarden.fronts.admin.metrics import warden_metrics
from memwarden.fronts.admin.outbox import give_up_outbox, list_outbox, retry_outbox, show_outbox
from memwarden.fronts.admin.plans import apply_route, plan_route, plans_route
from memwarden.fronts.admin.reports import cleanup_route, health_route
from memwarden.fronts.admin.retention import run_retention
from memwarden.fronts.admin.review import approve_review, list_review, reject_review
from memwarden.fronts.admin.snapshots import list_bank_snapshots, rollback_snapshot, show_snapshot
from memwarden.fronts.admin.store import reembed
from memwarden.fronts.asgi import send_json
from memwarden.fronts.hindsight.config import bank_config, bank_profile, destructive
from memwarden.fronts.hindsight.health import hindsight_health
from memwarden.fronts.hindsight.operations import operation_status
from memwarden.fronts.hindsight.passthrough import forward
from memwarden.fronts.hindsight.recall import governed_list, governed_recall, governed_tags
from memwarden.fronts.hindsight.retain import governed_retain
from memwarden.fronts.hindsight.writes import document_patch, files_retain, mcp
from memwarden.governance.state import AppState
from memwarden.policies.ids import bank_id_problem

BANK = "/v1/default/banks/{bank_id}"
Handler = Callable[[AppState, Scope, Receive, Send], Awaitable[None]]


BANK_PREFIX = "/v1/default/banks/"


def bank_of(path: str) -> str | None:
    """The bank a Hindsight path is about, for the log line of routes without a bank parameter."""
    if not path.startswith(BANK_PREFIX):
        return None
    return path[len(BANK_PREFIX) :].split("/", 1)[0] or None


class Endpoint:
    """An ASGI endpoint bound to the app state; starlette treats it as a raw ASGI app."""

    def __init__(self, name: str, handler: Handler) -> None:
        self.__name__ = name
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state: AppState = scope["app"].state.warden
        bank_id = scope.get("path_params", {}).get("bank_id") or bank_of(scope["path"])
        info = scope.setdefault("state", {})
        info["route"] = self.__name__  # the metrics' route label
        if bank_id is not None:
            problem = bank_id_problem(bank_id, _raw_bank_segment(scope))
            if problem is not None:  # before anything is read, written or forwarded
                await send_json(send, 400, {"detail": problem})
                return
            info["bank_id"] = bank_id
        await self.handler(state, scope, receive, send)


def _raw_bank_segment(scope: Scope) -> str | None:
    """The bank's path segment as sent (still percent-encoded)."""
    raw = (scope.get("raw_path") or b"").decode("latin-1")
    for prefix in (BANK_PREFIX, "/warden/v1/banks/"):
        if raw.startswith(prefix):
            return raw[len(prefix) :].split("/", 1)[0]
    return None


async def pass_through(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await forward(state.backend, scope, receive, send, retries=state.read_retries)


# Governed routes. Each is a named seam.
async def retain_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await governed_retain(state, scope, receive, send)


async def recall_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await governed_recall(state, scope, receive, send)


def build_routes() -> list[BaseRoute]:
    return [
        Route("/warden/health", Endpoint("warden_health", warden_health), methods=["GET"]),
        Route("/warden/metrics", Endpoint("warden_metrics", warden_metrics), methods=["GET"]),
        Route("/warden/v1/audit", Endpoint("list_audit", list_audit), methods=["GET"]),
        Route("/warden/v1/audit/stream", Endpoint("stream_audit", stream_audit), methods=["GET"]),
        Route("/warden/v1/audit/verify", Endpoint("verify_audit", verify_audit), methods=["GET"]),
        Route("/warden/v1/banks/{bank_id}/review", Endpoint("list_review", list_review), methods=["GET"]),
        Route(
            "/warden/v1/banks/{bank_id}/review/{memory_id}/approve",
            Endpoint("approve_review", approve_review),
            methods=["POST"],
        ),
        Route(
            "/warden/v1/banks/{bank_id}/review/{memory_id}/reject",
            Endpoint("reject_review", reject_review),
            methods=["POST"],
        ),
        Route("/warden/v1/banks/{bank_id}/snapshots", Endpoint("list_snapshots", list_bank_snapshots), methods=["GET"]),
        Route(
            "/warden/v1/banks/{bank_id}/snapshots/{snapshot_id}",
            Endpoint("show_snapshot", show_snapshot),
            methods=["GET"],
        ),
        Route(
            "/warden/v1/banks/{bank_id}/snapshots/{snapshot_id}/rollback",
            Endpoint("rollback_snapshot", rollback_snapshot),
            methods=["POST"],
        ),
        Route("/warden/v1/banks/{bank_id}/reembed", Endpoint("reembed", reembed), methods=["POST"]),
        Route("/warden/v1/banks/{bank_id}/explain", Endpoint("explain", explain), methods=["POST"]),
        Route("/warden/v1/outbox", Endpoint("list_outbox", list_outbox), methods=["GET"]),
        Route("/warden/v1/outbox/{operation_id}", Endpoint("show_outbox", show_outbox), methods=["GET"]),
        Route("/warden/v1/outbox/{operation_id}/retry", Endpoint("retry_outbox", retry_outbox), methods=["POST"]),
        Route("/warden/v1/outbox/{operation_id}/give-up", Endpoint("give_up_outbox", give_up_outbox), methods=["POST"]),
        Route("/warden/v1/retention/run", Endpoint("retention", run_retention), methods=["POST"]),
        Route("/warden/v1/banks/{bank_id}/plans", Endpoint("plans", plans_route), methods=["GET", "POST"]),
        Route("/warden/v1/banks/{bank_id}/plans/{plan_id}", Endpoint("plan", plan_route), methods=["GET"]),
        Route(
            "/warden/v1/banks/{bank_id}/plans/{plan_id}/apply", Endpoint("plan_apply", apply_route), methods=["POST"]
        ),
        Route("/warden/v1/banks/{bank_id}/reports/cleanup", Endpoint("report_cleanup", cleanup_route), methods=["GET"]),
        Route("/warden/v1/banks/{bank_id}/reports/health", Endpoint("report_health", health_route), methods=["GET"]),
        Route(
            "/warden/v1/banks/{bank_id}/memories", Endpoint("warden_memories", list_ledger_memories), methods=["GET"]
        ),
        Route(
            "/warden/v1/banks/{bank_id}/memories/{memory_id}",
            Endpoint("warden_memory", memory_detail),
            methods=["GET"],
        ),
        Route(
            "/warden/v1/banks/{bank_id}/memories/{memory_id}/archive",
            Endpoint("archive_memory", archive_memory),
            methods=["POST"],
        ),
        Route(
            "/warden/v1/banks/{bank_id}/memories/{memory_id}/restore",
            Endpoint("restore_memory", restore_memory),
            methods=["POST"],
        ),
        Route(
            "/warden/v1/banks/{bank_id}/memories/{memory_id}/feedback",
            Endpoint("memory_feedback", memory_feedback),
            methods=["POST"],
        ),
        Route("/health", Endpoint("health", hindsight_health), methods=["GET"]),
        Route(f"{BANK}/memories", Endpoint("retain_memories", retain_memories), methods=["POST"]),
        Route(f"{BANK}/memories/recall", Endpoint("recall_memories", recall_memories), methods=["POST"]),
        Route(f"{BANK}/operations/{{operation_id}}", Endpoint("operation", operation_status), methods=["GET"]),
        Route(f"{BANK}/memories/list", Endpoint("list_memories", governed_list), methods=["GET"]),
        Route(f"{BANK}/tags", Endpoint("list_tags", governed_tags), methods=["GET"]),
        Route(f"{BANK}/config", Endpoint("bank_config", bank_config), methods=["GET", "PATCH", "DELETE"]),
        Route(BANK, Endpoint("bank_profile", bank_profile), methods=["PUT", "PATCH"]),
        Route(BANK, Endpoint("delete_bank", destructive), methods=["DELETE"]),
        Route(f"{BANK}/memories", Endpoint("delete_memories", destructive), methods=["DELETE"]),
        Route(f"{BANK}/documents/{{document_id:path}}", Endpoint("delete_document", destructive), methods=["DELETE"]),
        Route(f"{BANK}/files/retain", Endpoint("files_retain", files_retain), methods=["POST"]),
        Route(f"{BANK}/documents/{{document_id:path}}", Endpoint("document_patch", document_patch), methods=["PATCH"]),
        Route("/mcp", Endpoint("mcp", mcp)),
        Route("/mcp/{rest:path}", Endpoint("mcp", mcp)),
        Route("/{path:path}", Endpoint("pass_through", pass_through)),
    ]
