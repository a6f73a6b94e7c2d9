"""The Mem0 front's routes, both dialects under ``/mem0`` (``fronts/mem0``): the platform's paths
(trailing slashes, as the official client sends them) and the open-source server's (none).

Scopes: reads need ``read`` on the Mem0 bank, writes (adds, updates, deletes, an entity's
delete_all) ``write``; erasing the whole bank (a delete_all naming no entity, ``/reset``) ``admin``.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from memwarden.fronts import auth
from memwarden.fronts.asgi import send_json
from memwarden.fronts.mem0 import platform as p
from memwarden.fronts.mem0.context import bank_for, need
from memwarden.fronts.mem0.models import ENTITY_FIELDS
from memwarden.fronts.mem0.rest import HANDLERS as REST
from memwarden.fronts.query import query_params
from memwarden.governance.state import AppState
from memwarden.proxy.routes import Endpoint, Handler

PREFIX = "/mem0"


def _delete_all(scope: Scope, bank: str | None) -> auth.Need:
    """An entity's memories: ``write``; every memory of the bank (no entity named): ``admin``."""
    query = query_params(scope)
    named = any(query.get(name) for name in ENTITY_FIELDS)
    return ("write" if named else "admin"), bank_for(scope["app"].state.warden, scope)


def _methods(path: str) -> list[str]:
    """The methods the front serves at ``path`` (none: a path it does not serve)."""
    return sorted({m for r in _SERVED if r.path_regex.match(path) for m in r.methods or ()})


async def mem0_unknown(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """What the front does not serve under /mem0 — never passed to the backend, which speaks another
    dialect: a path it serves with another method is a ``405`` with ``Allow``, in the dialect's words
    (the platform's Django REST framework, the open-source server's FastAPI); any other a ``404``."""
    path: str = scope["path"]
    allowed = _methods(path)
    if not allowed:
        await send_json(send, 404, {"detail": "Not Found"})
        return
    platform = path.startswith((f"{PREFIX}/v1/", f"{PREFIX}/v2/", f"{PREFIX}/v3/"))
    detail = f'Method "{scope["method"]}" not allowed.' if platform else "Method Not Allowed"
    await send_json(send, 405, {"detail": detail}, headers=[(b"allow", ", ".join(allowed).encode())])


def mem0_routes() -> list[BaseRoute]:
    _SERVED[:] = _routes()
    return list(_SERVED)


_SERVED: list[Route] = []


def _routes() -> list[Route]:
    read, write, admin = need("read"), need("write"), need("admin")

    def route(path: str, name: str, handler: Handler, rule: auth.Rule, method: str) -> Route:
        made = Route(PREFIX + path, Endpoint(f"mem0_{name}", handler, rule), methods=[method])
        made.methods = {method}  # no HEAD beside a GET
        return made

    h = p.handler
    # An entity name may hold "/" (the official client sends it percent-encoded; the path arrives decoded).
    memory, entity = "/v1/memories/{memory_id}/", "/v2/entities/{entity_type}/{entity_name:path}/"
    return [
        route("/v1/ping/", "ping", h(p.ping), read, "GET"),
        route("/v3/memories/add/", "add", h(p.add_v3), write, "POST"),
        route("/v1/memories/", "add_v1", h(p.add_v1), write, "POST"),
        route("/v1/event/{event_id}/", "event", h(p.event), read, "GET"),
        route("/v3/memories/", "list", h(p.list_v3), read, "POST"),
        route("/v2/memories/", "list_v2", h(p.list_v2), read, "POST"),
        route("/v3/memories/search/", "search", h(p.search_v3), read, "POST"),
        route("/v2/memories/search/", "search_v2", h(p.search_v2), read, "POST"),
        route(memory, "get", h(p.get_memory), read, "GET"),
        route(memory, "update", h(p.update_memory), write, "PUT"),
        route(memory, "delete", h(p.delete_memory), write, "DELETE"),
        route("/v1/memories/{memory_id}/history/", "history", h(p.history), read, "GET"),
        route("/v1/memories/", "delete_all", h(p.delete_all), _delete_all, "DELETE"),
        route("/v1/entities/", "entities", h(p.entities), read, "GET"),
        route(entity, "delete_entity", h(p.delete_entity), write, "DELETE"),
        route("/v1/batch/", "batch_update", h(p.batch_update), write, "PUT"),
        route("/v1/batch/", "batch_delete", h(p.batch_delete), write, "DELETE"),
        # The open-source server's REST API.
        route("/memories", "rest_add", REST["add"], write, "POST"),
        route("/memories", "rest_list", REST["list"], read, "GET"),
        route("/memories", "rest_delete_all", REST["delete_all"], write, "DELETE"),
        route("/memories/{memory_id}", "rest_get", REST["get"], read, "GET"),
        route("/memories/{memory_id}", "rest_update", REST["update"], write, "PUT"),
        route("/memories/{memory_id}", "rest_delete", REST["delete"], write, "DELETE"),
        route("/memories/{memory_id}/history", "rest_history", REST["history"], read, "GET"),
        route("/search", "rest_search", REST["search"], read, "POST"),
        route("/reset", "rest_reset", REST["reset"], admin, "POST"),
    ]
