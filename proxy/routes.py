"""The route table: memwarden's own routes, the governed Hindsight routes, and the pass-through.

Governed routes (retain, bank config, bank create/update, the destructive DELETEs, recall, reflect)
have named handlers; every other path — any method — streams through to the backend untouched
(some, as directives and mental models, named here for the need their methods declare).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from urllib.parse import unquote

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from memwarden.db.audit import ACTOR
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
from memwarden.fronts.asgi import sandboxed, send_json
from memwarden.fronts.hindsight.config import bank_config, bank_profile, destructive
from memwarden.fronts.hindsight.health import hindsight_health
from memwarden.fronts.hindsight.operations import operation_status
from memwarden.fronts.hindsight.passthrough import forward
from memwarden.fronts.hindsight.recall import (
    governed_entities,
    governed_list,
    governed_recall,
    governed_reflect,
    governed_tags,
)
from memwarden.fronts.hindsight.retain import governed_retain
from memwarden.fronts.hindsight.transfer import bank_import
from memwarden.fronts.hindsight.writes import curate_memory, document_patch, files_retain, mcp, scanned_write
from memwarden.fronts.openapi import openapi_document
from memwarden.fronts.query import query_params
from memwarden.fronts.ui.routes import ui_asset, ui_page, ui_redirect
from memwarden.governance.state import AppState
from memwarden.policies.ids import bank_id_problem, id_secret_problem
from memwarden.policies.keys import Level

BANK = "/v1/default/banks/{bank_id}"
Handler = Callable[[AppState, Scope, Receive, Send], Awaitable[None]]


BANK_PREFIX = "/v1/default/banks/"


def bank_of(path: str) -> str | None:
    """The bank a Hindsight path is about, for the log line of routes without a bank parameter."""
    if not path.startswith(BANK_PREFIX):
        return None
    return path[len(BANK_PREFIX) :].split("/", 1)[0] or None


class Endpoint:
    """An ASGI endpoint bound to the app state; starlette treats it as a raw ASGI app. ``need``: what
    the caller's key must grant (``fronts/auth.py``), from the request and its bank."""

    def __init__(self, name: str, handler: Handler, need: auth.Rule) -> None:
        self.__name__ = name
        self.handler = handler
        self.need = need

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
        for name, value in scope.get("path_params", {}).items():  # document, operation, memory … ids
            if name == "path":  # the pass-through: any segment of the backend's path is an id of its own
                problem = next(
                    (p for part in value.split("/") if (p := id_secret_problem("A path segment", part))), None
                ) or id_secret_problem("A path segment", value)
            elif name.endswith("_id") and name != "bank_id":
                problem = id_secret_problem(name, value)
            else:
                problem = None
            if problem is not None:
                await send_json(send, 400, {"detail": problem})
                return
        if not await auth.authorize(state.keys, scope, send, self.need(scope, bank_id)):
            return
        key = auth.key_of(scope)
        if key is None:
            await self.handler(state, scope, receive, send)
            return
        acting = ACTOR.set(key.id)  # the actor of every audit event the request makes
        try:
            await self.handler(state, scope, receive, send)
        finally:
            ACTOR.reset(acting)


def _raw_bank_segment(scope: Scope) -> str | None:
    """The bank's path segment as sent (still percent-encoded)."""
    raw = (scope.get("raw_path") or b"").decode("latin-1")
    for prefix in (BANK_PREFIX, "/warden/v1/banks/"):
        if raw.startswith(prefix):
            return raw[len(prefix) :].split("/", 1)[0]
    return None


async def pass_through(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """A route memwarden does not govern: a read as sent (retried), a write once no field of its
    body holds a secret (:func:`scanned_write`)."""
    if scope["method"] in ("POST", "PUT", "PATCH"):
        await scanned_write(state, scope, receive, send)
        return
    await forward(state.backend, scope, receive, send, retries=state.read_retries)


async def attachment(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """An inline attachment's bytes, as the backend serves them, never as a page of memwarden's
    origin (the dashboard's): an HTML or SVG "attachment" would otherwise run script there."""
    await forward(state.backend, scope, receive, sandboxed(send), retries=state.read_retries)


# Governed routes. Each is a named seam.
async def retain_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await governed_retain(state, scope, receive, send)


async def recall_memories(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await governed_recall(state, scope, receive, send)


def _mcp(scope: Scope, bank: str | None) -> auth.Need:
    """MCP reaches the backend's tools ungoverned — config and deletion among them: ``admin`` on the
    bank of a single-bank path (``/mcp/{bank}/``), else (``/mcp/``, ``/mcp//…``, or a bank named
    by ``X-Bank-Id``) on every bank."""
    segments = scope["path"].removeprefix("/mcp").split("/")
    named = len(segments) > 1 and segments[1] != ""
    if not named or any(k == b"x-bank-id" for k, _ in scope["headers"]):
        return "admin", None
    return "admin", segments[1]


def _read_every_bank(scope: Scope, bank: str | None) -> auth.Need:
    """A chunk by its id (``{bank}_{document}_{index}``): the id does not say for sure which bank
    it is in (a bank id may hold ``_``), so reading it needs ``read`` on every bank."""
    return "read", None


def _read_or_admin(scope: Scope, bank: str | None) -> auth.Need:
    """A bank's config: reading it needs ``read``; changing or resetting it, ``admin``."""
    return ("read" if scope["method"] in auth.READ_METHODS else "admin"), bank


def _transfer_import(scope: Scope, bank: str | None) -> auth.Need:
    """An import writes a bank: ``admin`` on it — the path's bank for a merge; for a restore the
    bank it creates (``target_bank_id``, else the archive's own: not known before the body is read,
    so ``admin`` on every bank)."""
    query = query_params(scope)  # as the route reads it
    if query.get("mode") == "merge":
        return "admin", bank
    return "admin", query.get("target_bank_id") or None


DOWNLOAD_KEY = re.compile(r"^(?P<tenant>tenants/[^/]+/)?banks/(?P<bank>.+)/exports/[^/]+/transfer\.zip$")


def _download(scope: Scope, bank: str | None) -> auth.Need:
    """An export's archive: ``admin`` on the bank its key names (every bank when it names none)."""
    found = DOWNLOAD_KEY.match(scope.get("path_params", {}).get("key", ""))
    if found is None:
        return "admin", None
    return "admin", unquote(found["bank"]) if found["tenant"] else found["bank"]


def _changes_need(level: Level) -> auth.Rule:
    """Reading needs ``read``, deleting ``admin``, any other change ``level``."""

    def need(scope: Scope, bank: str | None) -> auth.Need:
        method = scope["method"]
        return ("read" if method in auth.READ_METHODS else "admin" if method == "DELETE" else level), bank

    return need


def build_routes() -> list[BaseRoute]:
    from memwarden.proxy.mem0_routes import mem0_routes, mem0_unknown  # they build on Endpoint, defined here

    def route(path: str, name: str, handler: Handler, need: auth.Rule, methods: list[str] | None) -> Route:
        made = Route(path, Endpoint(name, handler, need), methods=methods)
        if methods is not None and not path.startswith("/warden"):
            # Hindsight's routes take exactly their methods (starlette adds HEAD to a GET): a HEAD goes
            # through to the backend, which answers it as Hindsight does (405).
            made.methods = set(methods)
        return made

    get, post = ["GET"], ["POST"]
    admin, read, write = auth.admin, auth.read, auth.write
    w = "/warden/v1"
    wbank = f"{w}/banks/{{bank_id}}"
    mm, gpd = f"{BANK}/mental-models/{{mental_model_id}}", ["GET", "PATCH", "DELETE"]
    return [
        route("/warden/health", "warden_health", warden_health, auth.open_route, get),
        route("/warden/openapi.json", "warden_openapi", openapi_document, auth.open_route, get),
        route("/warden/metrics", "warden_metrics", warden_metrics, admin, get),
        route("/warden/ui", "warden_ui_redirect", ui_redirect, auth.open_route, get),
        route("/warden/ui/", "warden_ui", ui_page, auth.open_route, get),
        route("/warden/ui/{asset:path}", "warden_ui_asset", ui_asset, auth.open_route, get),
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
        route("/health", "health", hindsight_health, auth.open_route, get),
        route("/health/ready", "health_ready", hindsight_health, auth.open_route, get),
        route("/health/live", "health_live", hindsight_health, auth.open_route, get),
        route(f"{BANK}/memories", "retain_memories", retain_memories, write, post),
        route(f"{BANK}/memories/recall", "recall_memories", recall_memories, read, post),
        route(f"{BANK}/operations", "list_operations", pass_through, read, get),
        route(f"{BANK}/operations/{{operation_id}}", "operation", operation_status, read, get),
        route(f"{BANK}/documents/{{document_id:path}}/chunks", "document_chunks", pass_through, read, get),
        route(f"{BANK}/documents/{{document_id:path}}/history", "document_history", pass_through, read, get),
        route("/v1/default/chunks/{chunk_id:path}", "chunk", pass_through, _read_every_bank, get),
        route(f"{BANK}/entities", "list_entities", governed_entities, read, get),
        route(f"{BANK}/entities/{{entity_id}}", "entity", governed_entities, read, get),  # and …/graph
        route(f"{BANK}/profile", "bank_profile_read", pass_through, read, get),  # 410 in Hindsight 1.1.0
        route(f"{BANK}/profile", "bank_profile_write", pass_through, admin, ["PUT"]),  # a config change: 410
        route(f"{BANK}/background", "bank_background", pass_through, admin, post),  # a config change: 410
        route(f"{BANK}/memories/list", "list_memories", governed_list, read, get),
        # A memory unit's curation (new text, or invalidated: out of recall) is what memwarden's
        # own archive is: admin; its fields are scanned like every write's.
        route(f"{BANK}/memories/{{memory_id}}", "curate_memory", curate_memory, admin, ["PATCH"]),
        route(f"{BANK}/memories/dry-run-extract", "dry_run_extract", scanned_write, write, post),
        route(f"{BANK}/tags", "list_tags", governed_tags, read, get),
        route(f"{BANK}/config", "bank_config", bank_config, _read_or_admin, ["GET", "PATCH", "DELETE"]),
        route(BANK, "bank_profile", bank_profile, admin, ["PUT", "PATCH"]),
        route(BANK, "delete_bank", destructive, admin, ["DELETE"]),
        route(f"{BANK}/memories", "delete_memories", destructive, admin, ["DELETE"]),
        route(f"{BANK}/documents/{{document_id:path}}", "delete_document", destructive, admin, ["DELETE"]),
        # Reflect reads the bank. Directives steer every reflect of the bank (config-like: changing
        # one needs admin); mental models are written like memories (write), deleted or cleared by admin.
        route(f"{BANK}/reflect", "reflect", governed_reflect, read, post),
        # Their fields reach the backend's database and log: refused when one holds a secret.
        route(f"{BANK}/directives", "directives", scanned_write, _changes_need("admin"), ["GET", "POST"]),
        route(f"{BANK}/directives/{{directive_id}}", "directive", scanned_write, _changes_need("admin"), gpd),
        route(f"{BANK}/mental-models", "mental_models", scanned_write, _changes_need("write"), ["GET", "POST"]),
        route(mm, "mental_model", scanned_write, _changes_need("write"), gpd),
        route(f"{mm}/history", "mental_model_history", pass_through, read, get),
        route(f"{mm}/refresh", "mental_model_refresh", pass_through, write, post),
        route(f"{mm}/clear", "mental_model_clear", pass_through, admin, post),
        route(f"{BANK}/files/retain", "files_retain", files_retain, write, post),
        route(f"{BANK}/attachments/{{attachment_id}}", "get_bank_attachment", attachment, read, get),
        # A bank's archive holds what memwarden keeps from readers (archived, superseded and held
        # memories, the ledger's labels and statuses): exporting it is an admin's act, as the
        # ledger's listing is; an import writes the bank it goes to.
        route(f"{BANK}/transfer/export", "export_bank_transfer", pass_through, admin, post),
        route(f"{BANK}/document-transfer/export", "export_documents", pass_through, admin, post),
        route("/v1/default/files/download/{key:path}", "download_file", pass_through, _download, get),
        route(f"{BANK}/transfer/import", "import_bank_transfer", bank_import, _transfer_import, post),
        route(f"{BANK}/document-transfer", "import_documents", bank_import, admin, post),
        route(f"{BANK}/documents/{{document_id:path}}", "document_patch", document_patch, write, ["PATCH"]),
        *mem0_routes(),
        route("/mem0/{rest:path}", "mem0_unknown", mem0_unknown, auth.open_route, None),
        route("/mcp", "mcp", mcp, _mcp, None),
        route("/mcp/{rest:path}", "mcp", mcp, _mcp, None),
        route("/{path:path}", "pass_through", pass_through, auth.by_method, None),
    ]
