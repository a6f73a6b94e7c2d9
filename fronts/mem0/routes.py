"""The Mem0 front's route table, both dialects under ``/mem0``: the platform's paths (trailing
slashes, as the official client sends them) and the open-source server's (none); what it does not
serve under ``/mem0`` is answered here, never passed to a backend of another dialect.

Scopes: reads need ``read`` on the Mem0 bank; adds, updates and deletes by id (archives, which an
operator can restore) ``write``; what erases — nothing undoes it —, ``admin``: a delete_all (an
entity's or the bank's), an entity's delete, ``/reset``, and deletes by id under ``[mem0]
hard_delete``.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from memwarden.fronts import auth
from memwarden.fronts.endpoint import Handler, route
from memwarden.fronts.mem0 import platform as p
from memwarden.fronts.mem0.context import bank_for, need
from memwarden.fronts.mem0.rest import HANDLERS as REST
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json

PREFIX = "/mem0"


def _deleting(scope: Scope, bank: str | None) -> auth.Need:
    """A delete of memories by id: an archive, which an operator can restore — ``write``; with
    ``[mem0] hard_delete`` an erasure, which nothing undoes — ``admin``."""
    state: AppState = scope["app"].state.warden
    return ("admin" if state.settings.mem0.hard_delete else "write"), bank_for(state, scope)


def _unknown(served: Sequence[Route]) -> Handler:
    async def mem0_unknown(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
        """What the front does not serve under /mem0 — never passed to the backend, which speaks
        another dialect: a path it serves with another method is a ``405`` with ``Allow``, in the
        dialect's words (the platform's Django REST framework, the open-source server's FastAPI);
        any other a ``404``."""
        path: str = scope["path"]
        allowed = sorted({m for r in served if r.path_regex.match(path) for m in r.methods or ()})
        if not allowed:
            await send_json(send, 404, {"detail": "Not Found"})
            return
        platform = path.startswith((f"{PREFIX}/v1/", f"{PREFIX}/v2/", f"{PREFIX}/v3/"))
        detail = f'Method "{scope["method"]}" not allowed.' if platform else "Method Not Allowed"
        await send_json(send, 405, {"detail": detail}, headers=[(b"allow", ", ".join(allowed).encode())])

    return mem0_unknown


def mem0_routes() -> list[BaseRoute]:
    """The front's routes, then the answer for every other path under /mem0."""
    served = _routes()
    unknown = route(f"{PREFIX}/{{rest:path}}", "mem0_unknown", _unknown(served), auth.open_route, None, exact=True)
    return [*served, unknown]


def _routes() -> list[Route]:
    read, write, admin = need("read"), need("write"), need("admin")

    def at(path: str, name: str, handler: Handler, rule: auth.Rule, method: str) -> Route:
        return route(PREFIX + path, f"mem0_{name}", handler, rule, [method], exact=True)  # no HEAD beside a GET

    h = p.handler
    # An entity name may hold "/" (the official client sends it percent-encoded; the path arrives decoded).
    memory, entity = "/v1/memories/{memory_id}/", "/v2/entities/{entity_type}/{entity_name:path}/"
    return [
        at("/v1/ping/", "ping", h(p.ping), read, "GET"),
        at("/v3/memories/add/", "add", h(p.add_v3), write, "POST"),
        at("/v1/memories/", "add_v1", h(p.add_v1), write, "POST"),
        at("/v1/event/{event_id}/", "event", h(p.event), read, "GET"),
        at("/v3/memories/", "list", h(p.list_v3), read, "POST"),
        at("/v2/memories/", "list_v2", h(p.list_v2), read, "POST"),
        at("/v3/memories/search/", "search", h(p.search_v3), read, "POST"),
        at("/v2/memories/search/", "search_v2", h(p.search_v2), read, "POST"),
        at(memory, "get", h(p.get_memory), read, "GET"),
        at(memory, "update", h(p.update_memory), write, "PUT"),
        at(memory, "delete", h(p.delete_memory), _deleting, "DELETE"),
        at("/v1/memories/{memory_id}/history/", "history", h(p.history), read, "GET"),
        at("/v1/memories/", "delete_all", h(p.delete_all), admin, "DELETE"),
        at("/v1/entities/", "entities", h(p.entities), read, "GET"),
        at(entity, "delete_entity", h(p.delete_entity), admin, "DELETE"),
        at("/v1/batch/", "batch_update", h(p.batch_update), write, "PUT"),
        at("/v1/batch/", "batch_delete", h(p.batch_delete), _deleting, "DELETE"),
        # The open-source server's REST API.
        at("/memories", "rest_add", REST["add"], write, "POST"),
        at("/memories", "rest_list", REST["list"], read, "GET"),
        at("/memories", "rest_delete_all", REST["delete_all"], admin, "DELETE"),
        at("/memories/{memory_id}", "rest_get", REST["get"], read, "GET"),
        at("/memories/{memory_id}", "rest_update", REST["update"], write, "PUT"),
        at("/memories/{memory_id}", "rest_delete", REST["delete"], _deleting, "DELETE"),
        at("/memories/{memory_id}/history", "rest_history", REST["history"], read, "GET"),
        at("/search", "rest_search", REST["search"], read, "POST"),
        at("/reset", "rest_reset", REST["reset"], admin, "POST"),
    ]
