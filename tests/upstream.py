"""A small in-process upstream standing in for Hindsight in fast tests and failure injection.

It echoes what it received (method, raw path, query, headers, body digest) and offers routes
that misbehave on purpose: slow answers, streamed and chunked bodies, gzip, 503 with
``Retry-After``, bodies cut off mid-way. ``UpstreamProbe`` records what happened on its side so a
test can assert what the backend saw (e.g. that a stream stopped when the client left).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class UpstreamProbe:
    requests: list[dict[str, Any]] = field(default_factory=list)
    stream_closed: threading.Event = field(default_factory=threading.Event)
    chunks_sent: int = 0


def _headers(request: Request) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("latin-1")] for k, v in request.scope["headers"]]


def create_upstream(probe: UpstreamProbe | None = None) -> Starlette:
    probe = probe or UpstreamProbe()

    async def echo(request: Request) -> Response:
        body = await request.body()
        seen = {
            "method": request.method,
            "raw_path": request.scope.get("raw_path", b"").decode("latin-1"),
            "path": request.url.path,
            "query": request.scope["query_string"].decode("latin-1"),
            "headers": _headers(request),
            "body_len": len(body),
            "body_sha256": hashlib.sha256(body).hexdigest(),
            "body": body.decode("utf-8", "replace") if len(body) <= 4096 else None,
        }
        try:
            parsed = json.loads(body)
            seen["items_received"] = len(parsed["items"]) if isinstance(parsed, dict) and "items" in parsed else None
        except (ValueError, TypeError):
            seen["items_received"] = None
        probe.requests.append(seen)
        return JSONResponse(seen, headers={"x-upstream": "echo"})

    async def retain(request: Request) -> Response:
        bank = request.path_params["bank"]
        if bank.startswith("fail500"):
            await request.body()
            return JSONResponse({"detail": "database exploded"}, status_code=500)
        if bank.startswith("reject422"):
            await request.body()
            return JSONResponse(
                {"detail": [{"type": "missing", "loc": ["body", "x"], "msg": "Field required"}]},
                status_code=422,
                headers={"x-ignored-params": "bogus"},
            )
        return await echo(request)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "healthy", "database": "connected"})

    async def version(request: Request) -> Response:
        return JSONResponse({"api_version": "1.1.0", "features": {"observations": True}})

    async def stream(request: Request) -> Response:
        chunks = int(request.query_params.get("chunks", "8"))
        size = int(request.query_params.get("size", "65536"))
        delay = float(request.query_params.get("delay", "0"))

        async def gen() -> AsyncIterator[bytes]:
            try:
                for i in range(chunks):
                    probe.chunks_sent = i + 1
                    yield bytes([65 + i % 26]) * size
                    if delay:
                        await asyncio.sleep(delay)
            finally:
                probe.stream_closed.set()

        return StreamingResponse(gen(), media_type="application/zip")

    async def download(request: Request) -> Response:
        size = int(request.query_params.get("size", str(5 * 1024 * 1024)))
        data = bytes(i % 251 for i in range(size))
        return Response(data, media_type="application/zip", headers={"x-sha256": hashlib.sha256(data).hexdigest()})

    async def upload(request: Request) -> Response:
        digest = hashlib.sha256()
        total = 0
        chunks = 0
        async for chunk in request.stream():
            digest.update(chunk)
            total += len(chunk)
            chunks += 1
        seen = {"len": total, "sha256": digest.hexdigest(), "chunks": chunks, "headers": _headers(request)}
        probe.requests.append(seen)
        return JSONResponse(seen)

    async def slow(request: Request) -> Response:
        await asyncio.sleep(float(request.query_params.get("seconds", "2")))
        return JSONResponse({"slow": True})

    async def busy(request: Request) -> Response:
        return JSONResponse(
            {"detail": "Server is at capacity for 'retain'"},
            status_code=503,
            headers={"retry-after": "7", "x-ignored-params": "entity_labels"},
        )

    async def gzipped(request: Request) -> Response:
        payload = json.dumps({"big": "x" * 5000}).encode()
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(
                gzip.compress(payload),
                media_type="application/json",
                headers={"content-encoding": "gzip", "vary": "Accept-Encoding"},
            )
        return Response(payload, media_type="application/json")

    async def dated(request: Request) -> Response:
        return JSONResponse({"ok": True}, headers={"date": "Mon, 01 Jan 2024 00:00:00 GMT"})

    async def broken(request: Request) -> Response:
        async def gen() -> AsyncIterator[bytes]:
            yield b"x" * 100_000
            raise RuntimeError("upstream died mid-body")

        return StreamingResponse(gen(), media_type="application/octet-stream")

    return Starlette(
        routes=[
            Route("/health", health),
            Route("/version", version),
            Route("/test/stream", stream),
            Route("/test/download", download),
            Route("/test/upload", upload, methods=["POST", "PUT"]),
            Route("/test/slow", slow),
            Route("/test/busy", busy, methods=["GET", "POST"]),
            Route("/test/gzip", gzipped),
            Route("/test/broken", broken),
            Route("/test/dated", dated),
            Route("/v1/default/banks/{bank}/memories", retain, methods=["POST"]),
            Route("/{path:path}", echo, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
        ]
    )
