"""Pass-through over real sockets: streaming both ways, disconnects, a backend that is down or slow.

memwarden and the stand-in upstream both run under uvicorn on loopback, as in production.
"""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from testing.loopback import free_port
from tests.conftest import make_settings, running_warden
from tests.upstream import UpstreamProbe


def test_large_upload_is_streamed_through(warden_url: str, probe: UpstreamProbe) -> None:
    size = 20 * 1024 * 1024
    digest = hashlib.sha256()

    def chunks() -> Iterator[bytes]:
        for i in range(size // 65536):
            block = bytes([i % 256]) * 65536
            digest.update(block)
            yield block

    # A generator body goes out chunked (no Content-Length), as a multipart upload may.
    r = httpx.post(f"{warden_url}/test/upload", content=chunks(), timeout=30)
    assert r.status_code == 200
    assert r.json()["len"] == size
    assert r.json()["sha256"] == digest.hexdigest()
    assert r.json()["chunks"] > 1  # it arrived in pieces, not as one buffered blob


def test_large_download_and_chunked_stream_arrive_intact(warden_url: str, upstream_url: str) -> None:
    direct = httpx.get(f"{upstream_url}/test/download", timeout=30)
    via = httpx.get(f"{warden_url}/test/download", timeout=30)
    assert via.status_code == 200
    assert via.content == direct.content
    assert hashlib.sha256(via.content).hexdigest() == via.headers["x-sha256"]
    assert via.headers["content-length"] == str(5 * 1024 * 1024)

    with httpx.stream("GET", f"{warden_url}/test/stream?chunks=40&size=65536", timeout=30) as r:
        assert r.headers.get("transfer-encoding") == "chunked"
        received = sum(len(c) for c in r.iter_raw())
    assert received == 40 * 65536


def test_client_hanging_up_mid_stream_stops_the_backend_transfer(warden_url: str, probe: UpstreamProbe) -> None:
    with httpx.stream("GET", f"{warden_url}/test/stream?chunks=2000&size=65536&delay=0.005", timeout=30) as r:
        for i, _ in enumerate(r.iter_raw()):
            if i == 3:
                break
    assert probe.stream_closed.wait(5), "the upstream kept streaming after the client left"
    assert probe.chunks_sent < 2000
    assert httpx.get(f"{warden_url}/health", timeout=5).status_code == 200


def test_client_disconnecting_mid_upload_leaves_the_server_serving(warden_url: str) -> None:
    host, port = warden_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(
            b"POST /test/upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            b"Content-Length: 10000000\r\n\r\n" + b"x" * 100_000
        )
        time.sleep(0.2)
    assert httpx.get(f"{warden_url}/health", timeout=5).status_code == 200


TRANSPORTS = pytest.mark.parametrize("transport", ["aiohttp", "httpx"])


@TRANSPORTS
def test_backend_down_gives_502_in_hindsights_shape(transport: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with running_warden(make_settings(dead, read_retries=1, transport=transport)) as url:
        r = httpx.post(f"{url}/v1/default/banks/b/memories/recall", json={"query": "q"}, timeout=10)
        assert r.status_code == 502
        assert r.headers["content-type"] == "application/json"
        assert r.json()["detail"].startswith("Backend unavailable: Hindsight at " + dead)
        r = httpx.get(f"{url}/v1/default/banks", timeout=10)
        assert r.status_code == 502
        # Hindsight's own health route says unhealthy in Hindsight's shape; memwarden's says degraded.
        health = httpx.get(f"{url}/health", timeout=10)
        assert health.status_code == 503
        assert health.json()["status"] == "unhealthy"
        warden = httpx.get(f"{url}/warden/health", timeout=10).json()
        assert warden["status"] == "degraded"
        assert warden["backend"]["healthy"] is False


@TRANSPORTS
def test_backend_timing_out_gives_504(upstream_url: str, transport: str) -> None:
    with running_warden(make_settings(upstream_url, read_timeout=0.3, transport=transport)) as url:
        started = time.monotonic()
        r = httpx.get(f"{url}/test/slow?seconds=3", timeout=10)
        assert r.status_code == 504
        assert "timed out" in r.json()["detail"]
        assert time.monotonic() - started < 2.5
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200


@TRANSPORTS
def test_chunked_body_over_the_limit_is_refused_and_server_keeps_serving(upstream_url: str, transport: str) -> None:
    settings = make_settings(upstream_url, transport=transport)
    settings = settings.model_copy(update={"server": settings.server.model_copy(update={"max_body_bytes": 100_000})})
    with running_warden(settings) as url:

        def chunks() -> Iterator[bytes]:
            for _ in range(50):
                yield b"y" * 10_000

        r = httpx.post(f"{url}/test/upload", content=chunks(), timeout=10)
        assert r.status_code == 413
        assert httpx.post(f"{url}/test/upload", content=b"z" * 1000, timeout=5).json()["len"] == 1000


def test_backend_breaking_off_mid_body_is_visible_to_the_client(warden_url: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{warden_url}/test/broken", timeout=10)
    assert httpx.get(f"{warden_url}/health", timeout=5).status_code == 200


def test_concurrent_requests_keep_their_own_answers(warden_url: str) -> None:
    import concurrent.futures

    def one(i: int) -> bool:
        r = httpx.post(f"{warden_url}/v1/default/banks/b{i}/memories/recall", json={"i": i}, timeout=10)
        return r.json()["raw_path"] == f"/v1/default/banks/b{i}/memories/recall" and r.json()["body"] == f'{{"i":{i}}}'

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert all(pool.map(one, range(200)))


def test_percent_encoded_targets_reach_the_backend_byte_for_byte(warden_url: str, probe: UpstreamProbe) -> None:
    target = "/v1/default/banks/team%2Fa%20b%41/documents/doc%2F1%3F?tags=a%3Db&tags=%E4%B8%AD&q=x+y"
    r = httpx.get(warden_url + target, timeout=5)
    assert r.status_code == 200
    seen = probe.requests[-1]
    assert seen["raw_path"] + "?" + seen["query"] == target


def test_head_requests_keep_the_backends_length(warden_url: str, upstream_url: str) -> None:
    direct = httpx.head(f"{upstream_url}/test/download?size=1000", timeout=5)
    via = httpx.head(f"{warden_url}/test/download?size=1000", timeout=5)
    assert via.status_code == direct.status_code == 200
    assert via.headers["content-length"] == direct.headers["content-length"] == "1000"
    assert via.content == b""
    assert len(httpx.get(f"{warden_url}/test/download?size=1000", timeout=5).content) == 1000
