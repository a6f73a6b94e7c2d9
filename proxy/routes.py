"""The app's route table: each front's own, in the order they are matched — memwarden's own API and
the dashboard, the Hindsight front's named routes, the Mem0 front under ``/mem0``, the MCP server at ``/mcp``, then the
pass-through of every other path to the backend (``fronts/hindsight/routes.py``) — and the OpenAPI
document of them all (``fronts/openapi.py``: every front's paths)."""

from __future__ import annotations

from starlette.routing import BaseRoute

from memwarden.fronts import auth
from memwarden.fronts.admin.routes import admin_routes
from memwarden.fronts.endpoint import route
from memwarden.fronts.hindsight.routes import hindsight_routes, pass_through_routes
from memwarden.fronts.mcp.routes import mcp_routes
from memwarden.fronts.mcp.server import McpFront
from memwarden.fronts.mem0.routes import mem0_routes
from memwarden.fronts.openapi import openapi_document
from memwarden.fronts.ui.routes import ui_routes


def build_routes(mcp: McpFront) -> list[BaseRoute]:
    document = route("/warden/openapi.json", "warden_openapi", openapi_document, auth.open_route, ["GET"], exact=False)
    fronts = [*admin_routes(), *ui_routes(), *hindsight_routes(), *mem0_routes(), *mcp_routes(mcp)]
    return [document, *fronts, *pass_through_routes()]
