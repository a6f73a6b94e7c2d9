"""Pass-through: what the backend sees and what the client gets back (in process, no sockets)."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import asgi_warden, make_settings
from tests.upstream import UpstreamProbe, create_upstream

pytestmark = pytest.mark.anyio


@pytest.fixture
async def warden(probe: UpstreamProbe) -> AsyncIterator[httpx.AsyncClient]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    async with backend, asgi_warden(make_settings("http://upstream.test"), backend) as client:
        yield client


def seen_headers(seen: dict[str, Any]) -> dict[str, str]:
    return {k.lower(): v for k, v in seen["headers"]}


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def test_request_reaches_backend_unchanged(warden: httpx.AsyncClient, probe: UpstreamProbe, method: str) -> None:
    body = None if method in {"GET", "OPTIONS"} else json.dumps({"k": "v", "ü": "☃"}).encode()
    r = await warden.request(
        method,
        "/v1/default/banks/team%2Fa%20b/documents/doc%2F1?tags=a&tags=b%3Dc&limit=5",
        content=body,
        headers={"content-type": "application/json", "user-agent": "hindsight-client-python/1.1.0", "x-custom": "1"},
    )
    assert r.status_code == 200
    seen = probe.requests[-1]
    assert seen["method"] == method
    assert seen["raw_path"] == "/v1/default/banks/team%2Fa%20b/documents/doc%2F1"
    assert seen["query"] == "tags=a&tags=b%3Dc&limit=5"
    assert seen["body"] == (body.decode() if body else "")
    headers = seen_headers(seen)
    assert headers["user-agent"] == "hindsight-client-python/1.1.0"
    assert headers["x-custom"] == "1"
    assert headers["host"] == "upstream.test"
    # The backend's answer comes back as it was sent, with its own headers.
    assert r.json() == seen
    assert r.headers["x-upstream"] == "echo"


async def test_hop_by_hop_headers_are_dropped_both_ways(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    await warden.get(
        "/anything",
        headers={
            "connection": "keep-alive, x-conn-scoped",
            "x-conn-scoped": "secret-ish",
            "keep-alive": "timeout=5",
            "te": "trailers",
            "proxy-authorization": "Basic abc",
            "x-end-to-end": "kept",
        },
    )
    headers = seen_headers(probe.requests[-1])
    for name in ("x-conn-scoped", "keep-alive", "te", "proxy-authorization"):
        assert name not in headers
    assert headers["x-end-to-end"] == "kept"


@pytest.mark.parametrize(
    ("options", "sent", "expected"),
    [
        ({}, "Bearer client-key", None),
        ({"forward_client_authorization": True}, "Bearer client-key", "Bearer client-key"),
        ({"api_key": "warden-key"}, "Bearer client-key", "Bearer warden-key"),
        ({"api_key": "warden-key"}, None, "Bearer warden-key"),
    ],
)
async def test_backend_key_is_memwardens_unless_configured(
    probe: UpstreamProbe, options: dict[str, Any], sent: str | None, expected: str | None
) -> None:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test", **options)
    async with backend, asgi_warden(settings, backend) as warden:
        await warden.get("/v1/default/banks", headers={"authorization": sent} if sent else {})
    assert seen_headers(probe.requests[-1]).get("authorization") == expected


async def test_request_id_is_propagated_or_generated(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    r = await warden.get("/v1/default/banks", headers={"x-request-id": "client-chosen-42"})
    assert r.headers["x-request-id"] == "client-chosen-42"
    assert seen_headers(probe.requests[-1])["x-request-id"] == "client-chosen-42"

    r = await warden.get("/v1/default/banks")
    generated = r.headers["x-request-id"]
    assert len(generated) == 32
    assert seen_headers(probe.requests[-1])["x-request-id"] == generated

    # A hostile id (log injection, oversized) is replaced, not echoed.
    r = await warden.get("/v1/default/banks", headers={"x-request-id": "a\tb" + "x" * 300})
    assert r.headers["x-request-id"] != "a\tb" + "x" * 300
    assert len(r.headers["x-request-id"]) == 32


async def test_retry_after_and_ignored_params_come_back(warden: httpx.AsyncClient) -> None:
    r = await warden.post("/test/busy", json={"x": 1})
    assert r.status_code == 503
    assert r.headers["retry-after"] == "7"
    assert r.headers["x-ignored-params"] == "entity_labels"
    assert r.json() == {"detail": "Server is at capacity for 'retain'"}


@pytest.fixture
async def warden_off(probe: UpstreamProbe) -> AsyncIterator[httpx.AsyncClient]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test", governance={"mode": "off"})
    async with backend, asgi_warden(settings, backend) as client:
        yield client


async def _forwarded_unchanged(client: httpx.AsyncClient, probe: UpstreamProbe, method: str, path: str) -> None:
    payload = {"items": [{"content": "Alice prefers tea", "tags": ["user:alice"]}], "async": False}
    content = json.dumps(payload).encode() if method in {"POST", "PUT", "PATCH"} else None
    r = await client.request(method, path, content=content, headers={"content-type": "application/json"})
    assert r.status_code == 200
    seen = probe.requests[-1]
    assert (seen["method"], seen["raw_path"]) == (method, path)
    if content:
        assert json.loads(seen["body"]) == payload


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/default/banks/b1/memories/recall"),
        ("GET", "/v1/default/banks/b1/config"),
        ("GET", "/v1/default/banks/b1/memories/list"),
    ],
)
async def test_requests_with_nothing_to_govern_forward_unchanged(
    warden: httpx.AsyncClient, probe: UpstreamProbe, method: str, path: str
) -> None:
    await _forwarded_unchanged(warden, probe, method, path)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/v1/default/banks/b1/config"),
        ("DELETE", "/v1/default/banks/b1/config"),
        ("PUT", "/v1/default/banks/b1"),
        ("PATCH", "/v1/default/banks/b1"),
        ("DELETE", "/v1/default/banks/b1"),
        ("DELETE", "/v1/default/banks/b1/memories"),
        ("DELETE", "/v1/default/banks/b1/documents/d1"),
    ],
)
async def test_config_and_destructive_routes_forward_unchanged_with_governance_off(
    warden_off: httpx.AsyncClient, probe: UpstreamProbe, method: str, path: str
) -> None:
    await _forwarded_unchanged(warden_off, probe, method, path)


async def test_compressed_bodies_pass_untouched(warden: httpx.AsyncClient) -> None:
    # A client that does not ask for gzip must not receive it...
    r = await warden.get("/test/gzip", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in r.headers
    assert r.json()["big"] == "x" * 5000
    # ...and one that asks gets the backend's gzip bytes as they were.
    async with warden.stream("GET", "/test/gzip", headers={"accept-encoding": "gzip"}) as r:
        raw = b"".join([c async for c in r.aiter_raw()])
    assert r.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(raw))["big"] == "x" * 5000


async def test_oversized_body_is_refused_before_reaching_the_backend(probe: UpstreamProbe) -> None:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test").model_copy(
        update={"server": make_settings("http://x").server.model_copy(update={"max_body_bytes": 1000})}
    )
    async with backend, asgi_warden(settings, backend) as warden:
        r = await warden.post("/v1/default/banks/b/reflect", content=b"x" * 1001)
        assert r.status_code == 413
        assert "limit of 1000" in r.json()["detail"] or "limit 1000" in r.json()["detail"]
        assert probe.requests == []
        at_limit = b'{"query": "' + b"x" * (1000 - 13) + b'"}'  # JSON: a body memwarden cannot read is a 422
        assert len(at_limit) == 1000
        ok = await warden.post("/v1/default/banks/b/reflect", content=at_limit)
        assert ok.status_code == 200


async def test_bad_content_length_is_a_400(warden: httpx.AsyncClient, probe: UpstreamProbe) -> None:
    # httpx would fix the header for us; build the request by hand.
    request = warden.build_request("POST", "/v1/default/banks/b/memories", content=b"{}")
    request.headers["content-length"] = "two"
    r = await warden.send(request)
    assert r.status_code == 400
    assert probe.requests == []


async def test_own_responses_carry_a_date_and_proxied_ones_keep_the_backends(warden: httpx.AsyncClient) -> None:
    own = await warden.get("/warden/health")
    assert own.headers.get_list("date")
    proxied = await warden.get("/test/dated")
    assert proxied.headers.get_list("date") == ["Mon, 01 Jan 2024 00:00:00 GMT"]
