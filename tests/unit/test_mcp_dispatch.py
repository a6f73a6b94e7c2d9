"""The MCP front's in-process twin request (``fronts/mcp/dispatch.py``) against an ASGI app that
answers as the pass-through does: the head first, then the body while a task watches ``receive``
for the client leaving — and stops sending if it has."""

from __future__ import annotations

import asyncio

import pytest
from starlette.types import Message, Receive, Scope, Send

from memwarden.fronts.mcp.dispatch import Dispatcher
from memwarden.fronts.mcp.twin import Request

pytestmark = pytest.mark.anyio
CHUNKS = [b'{"text": "', *[b"x" * 1000] * 50, b'"}']


async def streaming_app(scope: Scope, receive: Receive, send: Send) -> None:
    assert (await receive())["type"] == "http.request"
    left = asyncio.Event()

    async def watch() -> None:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            left.set()

    watcher = asyncio.create_task(watch())
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    for chunk in CHUNKS:
        await asyncio.sleep(0)  # a backend's chunk arrives: the watcher gets its turn
        if left.is_set():
            return  # the client left: the rest is not sent
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    watcher.cancel()


async def test_the_in_process_client_stays_until_the_answer_is_whole() -> None:
    origin: Scope = {"type": "http", "headers": [(b"host", b"127.0.0.1:8890")], "state": {}}
    answer = await Dispatcher(streaming_app, origin)(Request("GET", "/v1/default/banks/b/documents/d"))
    assert answer.status == 200
    assert answer.body == {"text": "x" * 50_000}
