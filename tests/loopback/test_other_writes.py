"""No bypass: /files/retain, MCP retain tool calls and document re-tagging."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import asgi_warden, make_settings
from tests.upstream import UpstreamProbe, create_upstream

pytestmark = pytest.mark.anyio


async def client_for(probe: UpstreamProbe, tmp_path: Path, **governance: Any) -> AsyncIterator[httpx.AsyncClient]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test", data_dir=tmp_path, governance=governance)
    async with backend, asgi_warden(settings, backend) as client:
        yield client


@pytest.fixture
async def warden(probe: UpstreamProbe, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in client_for(probe, tmp_path):
        yield client


async def test_file_retain_is_refused_by_default(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    r = await warden.post("/v1/default/banks/b/files/retain", files={"files": ("a.txt", b"still broken")})
    assert r.status_code == 403
    assert "allow_file_retain" in r.json()["detail"]
    assert probe.requests == []


async def test_file_retain_passes_when_allowed(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for warden in client_for(probe, tmp_path, allow_file_retain=True):
        r = await warden.post("/v1/default/banks/b/files/retain", files={"files": ("a.txt", b"facts")})
        assert r.status_code == 200
        assert probe.requests[-1]["path"] == "/v1/default/banks/b/files/retain"


def rpc(name: str, ident: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"content": "still broken"}},
    }


async def test_mcp_retain_calls_get_a_json_rpc_error(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    r = await warden.post("/mcp/b/", json=rpc("retain", 7))
    assert r.status_code == 200
    assert r.json()["id"] == 7
    assert "not governed" in r.json()["error"]["message"]
    r = await warden.post("/mcp/", json=[rpc("recall", 1), rpc("sync_retain", 2)])
    assert [e["id"] for e in r.json()] == [2]
    assert probe.requests == []


async def test_other_mcp_traffic_passes(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    r = await warden.post("/mcp/", json=rpc("recall"))
    assert r.status_code == 200
    assert json.loads(probe.requests[-1]["body"]) == rpc("recall")
    await warden.get("/mcp/")
    assert probe.requests[-1]["method"] == "GET"


async def test_document_retag_is_canonicalized_and_labels_validated(
    warden: httpx.AsyncClient, probe: UpstreamProbe, tmp_path: Path
) -> None:
    r = await warden.patch("/v1/default/banks/b/documents/doc%2F1", json={"tags": ["Topic=Infrastructure", "user=bob"]})
    assert r.status_code == 200
    assert json.loads(probe.requests[-1]["body"]) == {"tags": ["topic:infra", "user:bob"]}
    assert probe.requests[-1]["raw_path"] == "/v1/default/banks/b/documents/doc%2F1"

    r = await warden.patch("/v1/default/banks/b/documents/d2", json={"tags": ["topic:infra", "topic:code"]})
    assert r.status_code == 422
    assert "one topic" in r.json()["detail"]
    assert len(probe.requests) == 1
    # A topic the vocabulary does not know is the client's own tag, as retain keeps it.
    r = await warden.patch("/v1/default/banks/b/documents/d2", json={"tags": ["topic:gardening", "topic:code"]})
    assert r.status_code == 200
    assert json.loads(probe.requests[-1]["body"]) == {"tags": ["topic:code", "topic:gardening"]}

    # Not a re-tag: passed on for Hindsight to judge.
    await warden.patch("/v1/default/banks/b/documents/d3", json={"observation_scopes": "shared"})
    assert json.loads(probe.requests[-1]["body"]) == {"observation_scopes": "shared"}


async def test_retag_updates_the_ledger_rows_of_the_document(warden: httpx.AsyncClient, tmp_path: Path) -> None:
    import sqlite3

    await warden.post(
        "/v1/default/banks/b/memories", json={"items": [{"content": "决定用激活码订阅模式", "document_id": "doc-9"}]}
    )
    await warden.patch("/v1/default/banks/b/documents/doc-9", json={"tags": ["topic:content", "stage:reference"]})
    db = sqlite3.connect(tmp_path / "memwarden.db")
    try:
        assert db.execute("SELECT topic, stage FROM memories WHERE document_id = 'doc-9'").fetchall() == [
            ("content", "reference")
        ]
        assert db.execute("SELECT action, source FROM audit_events ORDER BY seq DESC LIMIT 1").fetchall() == [
            ("update", "document_retag")
        ]
    finally:
        db.close()


async def test_a_streamed_mcp_answer_reaches_the_client_whole(tmp_path: Path) -> None:
    """MCP answers stream (server-sent events): forwarding a body memwarden had read must not tell
    the pass-through the client left once the body was handed on (it cut every streamed MCP answer
    short: found by a review)."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from testing.loopback import serve_in_thread
    from tests.conftest import running_warden

    async def events() -> AsyncIterator[bytes]:
        for i in range(3):
            yield f'event: message\ndata: {{"jsonrpc": "2.0", "id": {i}}}\n\n'.encode()
            await asyncio.sleep(0.2)

    async def mcp(request: Any) -> StreamingResponse:
        await request.body()
        return StreamingResponse(events(), media_type="text/event-stream")

    backend = Starlette(routes=[Route("/mcp/", mcp, methods=["POST"])])
    with serve_in_thread(backend) as backend_url, running_warden(make_settings(backend_url, data_dir=tmp_path)) as url:
        async with httpx.AsyncClient(timeout=30) as http:
            r = await http.post(f"{url}/mcp/", json=rpc("recall"))
    assert r.status_code == 200
    assert r.text.count("event: message") == 3
