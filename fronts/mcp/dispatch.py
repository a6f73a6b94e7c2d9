"""A tool's twin request sent through memwarden's own app, in process: the HTTP front's route serves
it as it serves a client — the same middleware (body limits), the guard (Host), the key's scope,
the governance — and answers into memory instead of a socket.

Of the MCP request the twin request carries the credentials (``Authorization``, ``X-Api-Key``),
the ``Host`` (when it had one), the request id (so a tool call's audit events name the id its
client was answered with), and the connection's client, server and scheme; nothing else: no Origin
(the MCP request passed the Origin check itself), no cookie, and no ``X-Warden-Confirm`` — a header
an MCP client sends with every call would confirm every deletion the model chooses, so a
destructive tool is confirmed by an admin key, never by the connection.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote, urlencode

import structlog
from starlette.types import ASGIApp, Message, Scope

from memwarden.fronts.mcp.twin import Answer, Request
from memwarden.fronts.middleware import request_id_of
from memwarden.wire.asgi import dumps, loads, replay

log = structlog.get_logger("memwarden.mcp")
# The MCP request's headers its twins carry: its key, its host, and its opt-in to provenance in recall.
CARRIED = frozenset({b"authorization", b"x-api-key", b"host", b"x-warden-provenance"})


class Dispatcher:
    """Sends twin requests for one MCP request (``origin``: its ASGI scope) to ``app``."""

    def __init__(self, app: ASGIApp, origin: Scope) -> None:
        self.app = app
        self.origin = origin
        self.carried = [(k, v) for k, v in origin["headers"] if k in CARRIED]
        request_id = request_id_of(origin)
        if request_id:
            self.carried.append((b"x-request-id", request_id.encode()))

    async def __call__(self, request: Request) -> Answer:
        body = b"" if request.body is None else dumps(request.body)
        headers = [*self.carried, *request.headers]
        if request.body is not None:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": self.origin.get("scheme", "http"),
            "path": unquote(request.path),
            "raw_path": request.path.encode("ascii"),
            "query_string": urlencode(list(request.query)).encode("ascii"),
            "root_path": "",
            "headers": headers,
            "client": self.origin.get("client"),
            "server": self.origin.get("server"),
            "state": {"via": "mcp"},  # the channel a write's provenance names (fronts/auth.provenance_of)
        }
        answered_whole = asyncio.Event()

        async def gone() -> Message:  # the in-process client leaves once the answer is whole, never before
            await answered_whole.wait()
            return {"type": "http.disconnect"}

        status = 500
        answered: dict[str, str] = {}
        chunks: list[bytes] = []

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                for k, v in message.get("headers", []):
                    answered[k.decode("latin-1").lower()] = v.decode("latin-1")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    answered_whole.set()

        try:
            await self.app(scope, replay(body, gone), send)
        except Exception as exc:  # answered 500 already (Starlette re-raises after its error handler)
            log.error("mcp_twin_failed", method=request.method, path=scope["path"], error=type(exc).__name__)
            status = 500
        finally:
            answered_whole.set()
        return Answer(status, _json(b"".join(chunks)), answered)


def _json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def with_header(headers: list[tuple[bytes, bytes]], name: bytes, value: bytes) -> list[tuple[bytes, bytes]]:
    return [*((k, v) for k, v in headers if k != name), (name, value)]
