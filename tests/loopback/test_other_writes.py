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
