"""memwarden's MCP server: Hindsight's tools over streamable HTTP at ``/mcp`` (every bank: the bank a
``bank_id`` argument, else ``X-Bank-Id``, else ``default``) and ``/mcp/{bank}/`` (that bank only: no
``bank_id`` argument, and no tool that names another bank), built on the official ``mcp`` SDK's
low-level server — the tools' schemas served as Hindsight's are, the arguments read here
(:mod:`.catalog`), each call sent to its HTTP twin (:mod:`.twins`, :mod:`.dispatch`).

Stateless, JSON answers: any instance answers any call (no session to find), and a call is one
request and one answer — no stream held open. As Hindsight's: a GET without a session (a client's
probe) is answered ``200 {}``, and a request that does not accept ``text/event-stream`` is served
all the same; any other GET (a stream) or a DELETE (a session's end) is a ``405``. A bank id is
read from the path as sent (``/mcp/a%2Fb/`` is not bank ``a``), and none may hold ``/``.

Keys: the request's key (``Authorization: Bearer …``, as MCP clients send one) is checked at the
door (401 without a usable one when keys are required) and then by each tool's twin for the scope
its HTTP route needs on the bank it touches (a refusal is the tool's error, naming the scope).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import mcp_types as types
import structlog
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from memwarden import __version__
from memwarden.fronts import auth
from memwarden.fronts.mcp import catalog
from memwarden.fronts.mcp.dispatch import Dispatcher, with_header
from memwarden.fronts.mcp.twin import Refused
from memwarden.fronts.mcp.twins import TWINS
from memwarden.governance.state import AppState
from memwarden.policies.ids import bank_id_problem
from memwarden.wire.asgi import BodyError, ClientGone, header, parse_json_async, read_body, replay, send_json

log = structlog.get_logger("memwarden.mcp")
DEFAULT_BANK = "default"
DICT_RESULTS = frozenset({"retain", "sync_retain"})  # a dict in both sets (the others: JSON text on /mcp)
SESSION = "mcp_session"


@dataclass(frozen=True)
class Session:
    """What one MCP request says beyond its JSON-RPC: the bank it is about and where it came in."""

    bank: str
    single_bank: bool
    dispatch: Dispatcher


def _result(value: Any, *, name: str, single_bank: bool) -> types.CallToolResult:
    if single_bank or name in DICT_RESULTS or not isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        structured = value if isinstance(value, dict) else {"result": value}
    else:
        text = json.dumps(value, indent=2, default=str)
        structured = {"result": text}
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult.model_validate({"content": [{"type": "text", "text": text}], "isError": True})


def _server(single_bank: bool) -> Server[Any]:
    listed = types.ListToolsResult.model_validate({"tools": catalog.tools(single_bank=single_bank)})

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        request = ctx.request
        session: Session | None = getattr(request, "scope", {}).get("state", {}).get(SESSION)
        if session is None:  # not through memwarden's door
            return _error("memwarden: this MCP server is reached over HTTP at /mcp")
        name = params.name
        tool = catalog.find(name, single_bank=single_bank)
        twin = TWINS.get(name)
        if tool is None or twin is None:
            return _error(f"Unknown tool: '{name}'")
        try:
            args = catalog.arguments(tool, params.arguments, single_bank=single_bank)
        except catalog.ArgumentError as exc:
            return _error(str(exc))
        if single_bank:
            bank = session.bank
        elif name == "create_bank":  # the bank it makes, not the session's
            bank = str(args["bank_id"])
        else:
            bank = str(args.pop("bank_id", None) or session.bank)
        problem = _bank_problem(bank)
        if problem is not None:
            return _error(json.dumps({"error": problem, "status": 400}))
        try:
            value = await twin(session.dispatch, bank, args)
        except Refused as exc:
            return _error(json.dumps({"error": exc.detail, "status": exc.answer.status}, default=str))
        except Exception as exc:  # a twin's answer this front did not expect: the tool's error, never the RPC's
            log.error("mcp_tool_failed", tool=name, bank=bank, error=f"{type(exc).__name__}: {exc}")
            return _error(json.dumps({"error": f"memwarden could not answer '{name}'", "status": 500}))
        return _result(value, name=name, single_bank=single_bank)

    return Server(
        "memwarden",
        version=__version__,
        instructions="Hindsight's memory tools, governed by memwarden: every write is judged, labelled, "
        "deduplicated and audited; what was not kept is said in the result's 'warden'.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _bank_problem(bank: str) -> str | None:
    """Why ``bank`` cannot be an MCP session's bank: a bank id's rules, and no ``/`` (in a twin's
    path it would be a bank and a path beneath it)."""
    if "/" in bank:
        return f"Invalid bank_id: {bank[:100]!r} holds '/'"
    return bank_id_problem(bank)


class McpFront:
    """The two MCP servers (every bank, one bank) and, while the app's lifespan runs them
    (:meth:`running`: each lifespan its own), their session managers; :meth:`handle` is the route's
    handler."""

    def __init__(self) -> None:
        self.servers = (_server(False), _server(True))
        self.managers: tuple[StreamableHTTPSessionManager, StreamableHTTPSessionManager] | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        every, one = (StreamableHTTPSessionManager(s, stateless=True, json_response=True) for s in self.servers)
        async with every.run(), one.run():
            self.managers = every, one
            try:
                yield
            finally:
                self.managers = None

    async def handle(self, state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
        if not await auth.authenticated(state.keys, scope, send):  # any usable key; each tool asks its scope
            return
        if scope["method"] != "POST":  # stateless: no stream to open (GET), no session to end (DELETE)
            if scope["method"] == "GET" and header(scope, b"mcp-session-id") is None:
                await send_json(send, 200, {})  # a client's probe before it posts (Hindsight answers it so)
                return
            await send_json(send, 405, {"detail": "Method Not Allowed"}, headers=[(b"allow", b"POST")])
            return
        raw = (scope.get("raw_path") or b"/mcp").decode("latin-1").removeprefix("/mcp").strip("/").split("/", 1)[0]
        single_bank = raw != ""
        bank = unquote(raw) if single_bank else (header(scope, b"x-bank-id") or DEFAULT_BANK)
        problem = _bank_problem(bank) or (bank_id_problem(bank, raw) if single_bank else None)
        if problem is not None or self.managers is None:
            await send_json(send, 400 if problem else 503, {"detail": problem or "memwarden is not serving"})
            return
        try:  # read as every body memwarden takes is: too deep, too many values, not JSON
            body = await read_body(receive)
            await parse_json_async(body)
        except ClientGone:
            return
        except BodyError as exc:
            error = {"code": -32700, "message": f"Parse error: {exc}"}
            status = 400 if exc.status == 422 else exc.status
            await send_json(send, status, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        receive = replay(body, receive)
        accept = header(scope, b"accept") or ""
        headers = scope["headers"]
        if "text/event-stream" not in accept or "application/json" not in accept:
            headers = with_header(headers, b"accept", b"application/json, text/event-stream")
        inner = dict(scope, headers=headers, state=dict(scope.get("state", {})))
        inner["state"][SESSION] = Session(bank, single_bank, Dispatcher(scope["app"], scope))
        every, one = self.managers
        await (one if single_bank else every).handle_request(inner, receive, send)
