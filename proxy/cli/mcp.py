"""``memwarden mcp``: memwarden's MCP tools on stdin/stdout, for desktop agents that launch a command
(Claude Desktop, Cursor, …) instead of connecting to a URL.

A bridge, not a second server: every ``tools/list`` and ``tools/call`` goes to a running memwarden's
``/mcp`` over HTTP (``--url``; one bank's tools with ``--bank``), with the key in
``MEMWARDEN_API_KEY`` (never an option: a command line is visible to every user of the machine). So
a stdio call is judged, scoped, audited and answered exactly as an HTTP one.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from urllib.parse import quote

import click

from memwarden import __version__
from memwarden.proxy.cli.client import KEY_VARIABLE, URL_OPTION


def endpoint(url: str, bank: str | None) -> str:
    """The MCP endpoint of a memwarden at ``url``: every bank's, or ``bank``'s alone."""
    return f"{url.rstrip('/')}/mcp/" + (f"{quote(bank, safe='')}/" if bank else "")


async def _bridge(target: str, key: str | None) -> None:
    import httpx2
    import mcp_types as types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout = httpx2.Timeout(300.0, connect=10.0)
    http = httpx2.AsyncClient(headers=headers, timeout=timeout)
    async with http, Client(streamable_http_client(target, http_client=http)) as upstream:
        ctx_type = ServerRequestContext[Any]

        async def list_tools(ctx: ctx_type, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return await upstream.list_tools(cursor=params.cursor if params else None)

        async def call_tool(ctx: ctx_type, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments)

        server = Server("memwarden", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


@click.command("mcp")
@URL_OPTION
@click.option("--bank", default=None, help="Serve this bank's tools only (/mcp/BANK/); default: every bank's.")
def mcp_command(url: str, bank: str | None) -> None:
    """Serve memwarden's MCP tools on stdio, for agents that launch a command.

    Each tool call goes to the memwarden at --url (start it first: memwarden serve), governed as
    every call is. The key, when the server requires one, comes from MEMWARDEN_API_KEY.

    \b
    Claude Desktop (claude_desktop_config.json):
      {"mcpServers": {"memory": {"command": "memwarden", "args": ["mcp", "--bank", "my-agent"],
                                 "env": {"MEMWARDEN_API_KEY": "mwk_…"}}}}
    """
    import anyio

    target = endpoint(url, bank)
    try:
        anyio.run(_bridge, target, os.environ.get(KEY_VARIABLE) or None)
    except KeyboardInterrupt:
        return
    except Exception as exc:  # the agent shows stderr: one line that says what to fix
        cause = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and exc.exceptions else exc
        print(f"memwarden mcp: cannot serve {target}: {type(cause).__name__}: {cause}", file=sys.stderr)
        sys.exit(1)
