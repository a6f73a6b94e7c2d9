"""The MCP front's routes: ``/mcp`` (every bank) and ``/mcp/{bank}/…`` (one bank), any method — the
server answers what streamable HTTP defines and refuses the rest. The key is checked by the front
itself (:meth:`~memwarden.fronts.mcp.server.McpFront.handle`) and then, per tool, by its twin."""

from __future__ import annotations

from starlette.routing import BaseRoute

from memwarden.fronts import auth
from memwarden.fronts.endpoint import route
from memwarden.fronts.mcp.server import McpFront


def mcp_routes(front: McpFront) -> list[BaseRoute]:
    return [
        route("/mcp", "mcp", front.handle, auth.open_route, None, exact=False),
        route("/mcp/{rest:path}", "mcp", front.handle, auth.open_route, None, exact=False),
    ]
