"""A trivial in-memory upstream in Hindsight's shapes, for measuring proxy overhead alone.

Usage: python -m bench.trivial_upstream PORT
"""

from __future__ import annotations

import json
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

RECALL = json.dumps(
    {
        "results": [
            {
                "id": f"00000000-0000-0000-0000-00000000000{i}",
                "text": "Alice prefers dark roast coffee in the morning.",
                "type": "world",
                "tags": ["user:alice", "topic:food"],
                "scores": {"final": 0.9, "reranker": None, "semantic": 0.5, "keyword": 0.3},
                "mentioned_at": "2026-11-29T20:16:09.122652+00:00",
                "document_id": f"doc-{i}",
            }
            for i in range(4)
        ],
        "trace": None,
        "entities": None,
        "chunks": None,
    }
).encode()
RETAIN = json.dumps(
    {"success": True, "bank_id": "bench", "items_count": 1, "async": True, "operation_id": "op", "usage": None}
).encode()
LIST = json.dumps({"items": [], "total": 0, "limit": 100, "offset": 0}).encode()
VERSION = json.dumps({"api_version": "1.1.0", "features": {"observations": True}}).encode()


def _json(body: bytes) -> Response:
    return Response(body, media_type="application/json")


async def recall(request: Request) -> Response:
    await request.body()
    return _json(RECALL)


async def retain(request: Request) -> Response:
    await request.body()
    return _json(RETAIN)


async def listing(request: Request) -> Response:
    return _json(LIST)


async def version(request: Request) -> Response:
    return _json(VERSION)


app = Starlette(
    routes=[
        Route("/v1/default/banks/{bank}/memories/recall", recall, methods=["POST"]),
        Route("/v1/default/banks/{bank}/memories", retain, methods=["POST"]),
        Route("/v1/default/banks/{bank}/memories/list", listing),
        Route("/version", version),
    ]
)

if __name__ == "__main__":
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )
