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
        (lambda b: b.retain("b1", {"items": []}), "POST", "/v1/default/banks/b1/memories", {"items": []}),
        (lambda b: b.recall("b1", {"query": "q"}), "POST", "/v1/default/banks/b1/memories/recall", {"query": "q"}),
        (lambda b: b.list_memories("b1", {"limit": 5}), "GET", "/v1/default/banks/b1/memories/list?limit=5", None),
        (lambda b: b.get_memory("b1", "m/1"), "GET", "/v1/default/banks/b1/memories/m%2F1", None),
        (
            lambda b: b.update_memory("b1", "m1", {"state": "invalidated"}),
            "PATCH",
            "/v1/default/banks/b1/memories/m1",
            {"state": "invalidated"},
        ),
        (lambda b: b.delete_document("b1", "d/1"), "DELETE", "/v1/default/banks/b1/documents/d/1", None),
        (lambda b: b.get_config("b1"), "GET", "/v1/default/banks/b1/config", None),
        (
            lambda b: b.patch_config("b1", {"retain_mission": "x"}),
            "PATCH",
            "/v1/default/banks/b1/config",
            {"updates": {"retain_mission": "x"}},
        ),
        (lambda b: b.stats("b1", refresh=True), "GET", "/v1/default/banks/b1/stats?refresh=true", None),
        (lambda b: b.version(), "GET", "/version", None),
    ],
)
async def test_each_call_hits_its_route(call: Any, method: str, path: str, body: Any) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    assert await call(backend_with(handler, api_key="k")) == {"ok": True}
    request = seen[0]
    assert request.method == method
    assert request.url.raw_path.decode() == path
    assert request.headers["authorization"] == "Bearer k"
    if body is not None:
        assert json.loads(request.content) == body


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
        await backend.recall("b", {"query": "q"})
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
