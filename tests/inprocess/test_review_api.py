"""The review queue: list, approve (forward + supersede), reject."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import asgi_warden, make_settings
from tests.upstream import UpstreamProbe, create_upstream

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]
RETAIN = "/v1/default/banks/b1/memories"


@pytest.fixture
async def warden(probe: UpstreamProbe, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    async with backend, asgi_warden(make_settings("http://upstream.test", data_dir=tmp_path), backend) as client:
        await client.post(RETAIN, json={"items": [{"content": "默认模型：deepseek/deepseek-v4-flash"}]})
        await client.post(RETAIN, json={"items": [{"content": "默认模型：gpt-4.1"}]})
        yield client


async def held_id(warden: httpx.AsyncClient) -> str:
    (entry,) = (await warden.get("/warden/v1/banks/b1/review")).json()["items"]
    assert entry["held"]["content"] == "默认模型：gpt-4.1"
    assert entry["conflicts_with"]["content"] == "默认模型：deepseek/deepseek-v4-flash"
    return str(entry["held"]["id"])


async def test_approve_forwards_and_supersedes(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    memory_id = await held_id(warden)
    r = await warden.post(f"/warden/v1/banks/b1/review/{memory_id}/approve")
    assert r.status_code == 200
    assert r.json()["status"] == "active"
    assert "removed from the backend" in r.json()["backend"]
    retains = [json.loads(x["body"]) for x in probe.requests if x["method"] == "POST" and x["body"]]
    assert retains[-1]["items"][0]["content"] == "默认模型：gpt-4.1"
    assert probe.requests[-1]["method"] == "DELETE"  # the old memory's own document
    assert (await warden.get("/warden/v1/banks/b1/review")).json()["items"] == []
    again = await warden.post(f"/warden/v1/banks/b1/review/{memory_id}/approve")
    assert again.status_code == 409
    actions = [e["action"] for e in (await warden.get("/warden/v1/audit")).json()["events"]]
    assert actions[-2:] == ["approve", "supersede"]
    # The new value now holds the key: the old one, sent again, is the conflict.
    r = await warden.post(RETAIN, json={"items": [{"content": "默认模型：deepseek/deepseek-v4-flash"}]})
    assert json.loads(r.headers["x-warden-decisions"]) == {"review": 1}


async def test_reject_drops_it(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    memory_id = await held_id(warden)
    before = len(probe.requests)
    r = await warden.post(f"/warden/v1/banks/b1/review/{memory_id}/reject")
    assert r.json()["status"] == "rejected"
    assert len(probe.requests) == before
    assert (await warden.get("/warden/v1/audit", params={"action": "reject_review"})).json()["events"]


async def test_unknown_ids_are_404(warden: httpx.AsyncClient) -> None:
    assert (await warden.post("/warden/v1/banks/b1/review/nope/approve")).status_code == 404
    assert (await warden.post("/warden/v1/banks/other/review/nope/reject")).status_code == 404
