"""The Hindsight front's route table: the governed Hindsight routes, the ones passed through by name
(for the need their methods declare), and the pass-through of every other path.

Governed routes (retain, bank config, bank create/update, the destructive DELETEs, recall, reflect)
have named handlers; every other path — any method — streams through to the backend untouched
(some, as directives and mental models, named here for the need their methods declare). Hindsight's
routes take exactly their methods (Starlette adds HEAD beside a GET): a HEAD goes through to the
backend, which answers it as Hindsight does (405).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from starlette.routing import BaseRoute
from starlette.types import Receive, Scope, Send

from memwarden.fronts import auth
from memwarden.fronts.endpoint import Handler
from memwarden.fronts.endpoint import route as endpoint_route
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
from memwarden.fronts.hindsight.writes import curate_memory, document_patch, files_retain, scanned_write
from memwarden.fronts.query import query_params
from memwarden.governance.state import AppState
from memwarden.policies.keys import Level
from memwarden.wire.asgi import sandboxed

BANK = "/v1/default/banks/{bank_id}"


def route(path: str, name: str, handler: Handler, need: auth.Rule, methods: list[str] | None) -> BaseRoute:
    return endpoint_route(path, name, handler, need, methods, exact=True)


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


def hindsight_routes() -> list[BaseRoute]:
    """Hindsight's routes memwarden names (governed, or passed through with a need of their own)."""
    get, post = ["GET"], ["POST"]
    admin, read, write = auth.admin, auth.read, auth.write
    mm, gpd = f"{BANK}/mental-models/{{mental_model_id}}", ["GET", "PATCH", "DELETE"]
    return [
        route("/health", "health", hindsight_health, auth.open_route, get),
        route("/health/ready", "health_ready", hindsight_health, auth.open_route, get),
        route("/health/live", "health_live", hindsight_health, auth.open_route, get),
        route(f"{BANK}/memories", "retain_memories", governed_retain, write, post),
        route(f"{BANK}/memories/recall", "recall_memories", governed_recall, read, post),
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
    ]


def pass_through_routes() -> list[BaseRoute]:
    """Every other path, passed through: last in the app's table (``/mcp`` is memwarden's own MCP
    server, ``fronts/mcp``: never the backend's)."""
    return [
        route("/{path:path}", "pass_through", pass_through, auth.by_method, None),
    ]
