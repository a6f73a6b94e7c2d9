"""memwarden's own API's route table: ``/warden/health``, ``/warden/metrics`` and every
``/warden/v1/…`` route (the dashboard's and the CLI's). Each needs ``admin`` (on the path's
bank, or on every bank) unless it is open."""

from __future__ import annotations

from starlette.routing import BaseRoute

from memwarden.fronts import auth
from memwarden.fronts.admin.audit import acknowledge_alarms, list_audit, stream_audit, verify_audit
from memwarden.fronts.admin.banks import list_banks, overview
from memwarden.fronts.admin.explain import explain
from memwarden.fronts.admin.health import warden_health
from memwarden.fronts.admin.keys import create_key, list_keys, revoke_key, show_key
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
from memwarden.fronts.endpoint import Handler
from memwarden.fronts.endpoint import route as endpoint_route

W = "/warden/v1"
WBANK = f"{W}/banks/{{bank_id}}"


def admin_routes() -> list[BaseRoute]:
    def route(path: str, name: str, handler: Handler, need: auth.Rule, methods: list[str]) -> BaseRoute:
        return endpoint_route(path, name, handler, need, methods, exact=False)  # HEAD beside a GET

    get, post = ["GET"], ["POST"]
    admin, w, wbank = auth.admin, W, WBANK
    return [
        route("/warden/health", "warden_health", warden_health, auth.open_route, get),
        route("/warden/metrics", "warden_metrics", warden_metrics, admin, get),
        route(f"{w}/banks", "list_banks", list_banks, admin, get),
        route(f"{wbank}/overview", "bank_overview", overview, admin, get),
        route(f"{w}/keys", "list_keys", list_keys, admin, get),
        route(f"{w}/keys", "create_key", create_key, admin, post),
        route(f"{w}/keys/{{key_id}}", "show_key", show_key, admin, get),
        route(f"{w}/keys/{{key_id}}", "revoke_key", revoke_key, admin, ["DELETE"]),
        route(f"{w}/audit", "list_audit", list_audit, auth.admin_of_query_bank, get),
        route(f"{w}/audit/stream", "stream_audit", stream_audit, auth.admin_of_query_bank, get),
        route(f"{w}/audit/verify", "verify_audit", verify_audit, admin, get),
        route(f"{w}/audit/acknowledge", "acknowledge_audit", acknowledge_alarms, admin, post),
        route(f"{wbank}/review", "list_review", list_review, admin, get),
        route(f"{wbank}/review/{{memory_id}}/approve", "approve_review", approve_review, admin, post),
        route(f"{wbank}/review/{{memory_id}}/reject", "reject_review", reject_review, admin, post),
        route(f"{wbank}/snapshots", "list_snapshots", list_bank_snapshots, admin, get),
        route(f"{wbank}/snapshots/{{snapshot_id}}", "show_snapshot", show_snapshot, admin, get),
        route(f"{wbank}/snapshots/{{snapshot_id}}/rollback", "rollback_snapshot", rollback_snapshot, admin, post),
        route(f"{wbank}/reembed", "reembed", reembed, admin, post),
        route(f"{wbank}/explain", "explain", explain, admin, post),
        route(f"{w}/outbox", "list_outbox", list_outbox, admin, get),
        route(f"{w}/outbox/{{operation_id}}", "show_outbox", show_outbox, admin, get),
        route(f"{w}/outbox/{{operation_id}}/retry", "retry_outbox", retry_outbox, admin, post),
        route(f"{w}/outbox/{{operation_id}}/give-up", "give_up_outbox", give_up_outbox, admin, post),
        route(f"{w}/retention/run", "retention", run_retention, admin, post),
        route(f"{wbank}/plans", "plans", plans_route, admin, ["GET", "POST"]),
        route(f"{wbank}/plans/{{plan_id}}", "plan", plan_route, admin, get),
        route(f"{wbank}/plans/{{plan_id}}/apply", "plan_apply", apply_route, admin, post),
        route(f"{wbank}/reports/cleanup", "report_cleanup", cleanup_route, admin, get),
        route(f"{wbank}/reports/health", "report_health", health_route, admin, get),
        route(f"{wbank}/memories", "warden_memories", list_ledger_memories, admin, get),
        route(f"{wbank}/memories/{{memory_id}}", "warden_memory", memory_detail, admin, get),
        route(f"{wbank}/memories/{{memory_id}}/archive", "archive_memory", archive_memory, admin, post),
        route(f"{wbank}/memories/{{memory_id}}/restore", "restore_memory", restore_memory, admin, post),
        route(f"{wbank}/memories/{{memory_id}}/feedback", "memory_feedback", memory_feedback, admin, post),
    ]
