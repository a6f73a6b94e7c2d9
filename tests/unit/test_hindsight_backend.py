"""backends/hindsight.py: the JSON calls and the error mapping, against a MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from memwarden.backends.base import BackendRejected, BackendTimeout, BackendUnavailable, MemoryBackend
from memwarden.backends.hindsight import HindsightBackend, bank_path
from memwarden.backends.transport import is_timeout
from memwarden.backends.types import Item, MemoryQuery, RecallQuery, TagFilter
from testing.loopback import free_port

pytestmark = pytest.mark.anyio


def backend_with(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> HindsightBackend:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HindsightBackend(client, base_url="http://hs:8888/", **kw)


def test_is_a_memory_backend() -> None:
    assert isinstance(backend_with(lambda r: httpx.Response(200)), MemoryBackend)


def test_bank_ids_are_quoted_like_hindsight_client() -> None:
    assert bank_path("team/a b", "/memories") == "/v1/default/banks/team%2Fa%20b/memories"


@pytest.mark.parametrize(
    ("call", "method", "path", "body"),
    [
        (
            lambda b: b.retain("b1", [Item("x", document_id="d1", tags=("t",))], wait=False),
            "POST",
            "/v1/default/banks/b1/memories",
            {"items": [{"content": "x", "document_id": "d1", "tags": ["t"]}], "async": True},
        ),
        (
            lambda b: b.recall("b1", RecallQuery("q", tags=TagFilter(("a",), "all"))),
            "POST",
            "/v1/default/banks/b1/memories/recall",
            {"query": "q", "tags": ["a"], "tags_match": "all"},
        ),
        (
            lambda b: b.list_memories("b1", MemoryQuery(document_id="d 1", state="invalidated", limit=5)),
            "GET",
            "/v1/default/banks/b1/memories/list?limit=5&offset=0&document_id=d+1&state=invalidated",
            None,
        ),
        (
            lambda b: b.list_documents("b1", limit=7, offset=14),
            "GET",
            "/v1/default/banks/b1/documents?limit=7&offset=14",
            None,
        ),
        (
            lambda b: b.set_memory_state("b1", "m/1", "invalidated", reason="archived"),
            "PATCH",
            "/v1/default/banks/b1/memories/m%2F1",
            {"state": "invalidated", "reason": "archived"},
        ),
        (lambda b: b.delete_document("b1", "d/1"), "DELETE", "/v1/default/banks/b1/documents/d/1", None),
        (lambda b: b.get_config("b1"), "GET", "/v1/default/banks/b1/config", None),
        (
            lambda b: b.patch_config("b1", {"retain_mission": "x"}),
            "PATCH",
            "/v1/default/banks/b1/config",
            {"updates": {"retain_mission": "x"}},
        ),
        (lambda b: b.reset_config("b1"), "DELETE", "/v1/default/banks/b1/config", None),
        (lambda b: b.stats("b1", refresh=True), "GET", "/v1/default/banks/b1/stats?refresh=true", None),
    ],
)
async def test_each_call_hits_its_route(call: Any, method: str, path: str, body: Any) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    await call(backend_with(handler, api_key="k"))
    request = seen[0]
    assert request.method == method
    assert request.url.raw_path.decode() == path
    assert request.headers["authorization"] == "Bearer k"
    if body is not None:
        assert json.loads(request.content) == body


async def test_answers_are_read_into_neutral_values() -> None:
    answers = {
        "/v1/default/banks/b/memories/recall": {
            "results": [
                {
                    "id": "m1",
                    "text": "Postgres 16",
                    "type": "world",
                    "document_id": "d1",
                    "tags": ["topic:infra"],
                    "scores": {"final": 0.5},
                },
            ],
            "trace": {"engine": "x"},
            "entities": None,
        },
        "/v1/default/banks/b/memories/list": {
            "items": [{"id": "m1", "text": "t", "fact_type": "experience", "state": "valid"}],
            "total": 3,
        },
        "/v1/default/banks/b/config": {"bank_id": "b", "config": {"a": 1, "b": 2}, "overrides": {"b": 2}},
        "/v1/default/banks/b/stats": {
            "nodes_by_fact_type": {"world": 4, "observation": 1},
            "total_documents": 2,
            "pending_operations": 1,
        },
        "/v1/default/banks/b/memories": {"success": True, "bank_id": "b", "items_count": 2, "operation_id": "op1"},
    }
    backend = backend_with(lambda r: httpx.Response(200, json=answers[r.url.path]))

    recalled = await backend.recall("b", RecallQuery("q"))
    hit = recalled.memories[0]
    assert (hit.id, hit.kind, hit.document_id, hit.tags) == ("m1", "world", "d1", ("topic:infra",))
    assert hit.extra["scores"] == {"final": 0.5}
    assert recalled.trace == {"engine": "x"}
    page = await backend.list_memories("b", MemoryQuery())
    assert (page.total, page.items[0].kind, page.items[0].state) == (3, "experience", "valid")
    config = await backend.get_config("b")
    assert (dict(config.values), dict(config.overrides)) == ({"a": 1, "b": 2}, {"b": 2})
    stats = await backend.stats("b")
    assert dict(stats.counts) == {"world": 4, "experience": 0, "observation": 1, "documents": 2}
    assert stats.pending == 1
    receipt = await backend.retain("b", [Item("x")], wait=False)
    assert (receipt.items, receipt.operation_id) == (2, "op1")


async def test_4xx_is_rejected_with_the_backends_body() -> None:
    backend = backend_with(lambda r: httpx.Response(404, json={"detail": "Bank 'x' not found"}))
    with pytest.raises(BackendRejected) as info:
        await backend.get_config("x")
    assert info.value.status == 404
    assert info.value.body == {"detail": "Bank 'x' not found"}


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_5xx_and_429_are_unavailable_with_retry_after(status: int) -> None:
    backend = backend_with(lambda r: httpx.Response(status, headers={"retry-after": "3"}, json={"detail": "busy"}))
    with pytest.raises(BackendUnavailable) as info:
        await backend.recall("b", RecallQuery("q"))
    assert info.value.status == status
    assert info.value.retry_after == 3.0


async def test_transport_failures_are_unavailable_or_timeout() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    def stall(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out")

    with pytest.raises(BackendUnavailable) as refused:
        await backend_with(refuse).stats("b")
    assert not isinstance(refused.value, BackendTimeout)
    with pytest.raises(BackendTimeout):
        await backend_with(stall).stats("b")


async def test_refused_connection_over_aiohttp_is_not_called_a_timeout() -> None:
    # httpx-aiohttp reports a refused connection as ConnectTimeout; memwarden must not.
    from httpx_aiohttp import AiohttpTransport

    async with httpx.AsyncClient(transport=AiohttpTransport()) as client:
        with pytest.raises(httpx.TransportError) as info:
            await client.get(f"http://127.0.0.1:{free_port()}/")
    assert not is_timeout(info.value)


async def test_health_reports_unreachable_without_raising() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    health = await backend_with(refuse).health()
    assert health.healthy is False
    assert "unreachable" in health.detail


async def test_health_reports_status_latency_and_version() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "healthy"})
        return httpx.Response(200, json={"api_version": "1.1.0"})

    health = await backend_with(handler).health()
    assert (health.healthy, health.version) == (True, "1.1.0")
    assert health.latency_ms is not None


async def test_held_documents_asks_for_each_document() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.raw_path.decode().endswith("/documents/d%201"):
            return httpx.Response(404, json={"detail": "Document not found"})
        return httpx.Response(200, json={"id": "x"})

    held = await backend_with(handler).held_documents("b", ["d0", "d 1", "d0"])
    assert held == {"d0"}
    with pytest.raises(BackendUnavailable):
        await backend_with(lambda r: httpx.Response(503, json={})).held_documents("b", ["d0"])
