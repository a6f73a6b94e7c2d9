"""Mem0's open-source REST server, as a test rig: Mem0's real ``Memory`` engine (mem0ai from the
registry: a local qdrant vector store on disk, its SQLite history, an OpenAI-compatible LLM and
embedder at ``llm_url`` — the project's offline stand-in, ``tests/fake_openai.py``) behind the
routes of Mem0's ``server/main.py`` with the validation and answers the reference records
(``../shared/reference/mem0-zep.md`` §2.1). The code is ours; Mem0's server itself is FastAPI
with a JWT/Postgres auth stack that does not run offline.

What it serves, as Mem0's server does: ``POST /memories`` (messages required, at least one of
``user_id``/``agent_id``/``run_id`` else 400), ``GET /memories`` (by entity; none: every memory, an
admin's call), ``GET|PUT|DELETE /memories/{id}``, ``GET /memories/{id}/history``, ``POST /search``
(entity ids at the top level moved into ``filters``), ``DELETE /memories`` (one entity required),
``POST /reset``; auth by ``X-API-Key`` or ``Authorization: Bearer`` (no ``Token`` scheme), no
``/v1`` prefix and no trailing-slash redirect. Errors are FastAPI's: ``{"detail": …}``, 422 for a
body that does not validate, and — as Mem0's server wraps every call of the engine — a 500 with the
engine's words for anything the engine raises (a memory not found among them); a memory fetched
by an unknown id is ``null``. Every request is logged in ``requests`` (method, path, JSON body,
status) for tests to read; ``down`` makes every route answer 503, as a server behind a proxy
that lost it, and ``slow_adds`` slows (and fails) the next adds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from testing.loopback import serve_in_thread

ENTITIES = ("user_id", "agent_id", "run_id")
DIMS = 384  # tests/fake_openai.py's embedding size


def memory_config(directory: Path, llm_url: str, *, dims: int = DIMS) -> dict[str, Any]:
    """The ``Memory.from_config`` dict of the rig: everything on disk in ``directory``."""
    openai = {"api_key": "offline", "openai_base_url": llm_url}
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(directory / "qdrant"),
                "on_disk": True,
                "collection_name": "memories",
                "embedding_model_dims": dims,
            },
        },
        "llm": {"provider": "openai", "config": {**openai, "model": "gpt-4o-mini"}},
        "embedder": {
            "provider": "openai",
            "config": {**openai, "model": "text-embedding-3-small", "embedding_dims": dims},
        },
        "history_db_path": str(directory / "history.db"),
    }


@dataclass
class Mem0Rig:
    """The engine and what the rig saw. ``api_key``: the key every request must present."""

    memory: Any
    api_key: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    down: bool = False
    # The next ``slow_adds`` adds take ``add_delay`` seconds, then answer ``add_status`` without
    # writing (None: written, then answered; ``write_then_fail``: written, then answered
    # ``add_status`` — the answer lost): a backend slow or failing as a kill -9 or a gateway meets it.
    slow_adds: int = 0
    add_delay: float = 0.0
    add_status: int | None = None
    write_then_fail: bool = False
    llm_seen: list[dict[str, Any]] = field(default_factory=list)  # its LLM's requests, when the caller records them
    lock: threading.Lock = field(default_factory=threading.Lock)  # qdrant local: one caller at a time

    async def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        def locked() -> Any:
            with self.lock:
                return fn(*args, **kwargs)

        return await run_in_threadpool(locked)


def _error(status: int, detail: Any) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def _authorized(rig: Mem0Rig, request: Request) -> bool:
    key = request.headers.get("x-api-key")
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        key = key or auth[7:].strip()
    return key == rig.api_key


async def _body(request: Request) -> dict[str, Any] | JSONResponse:
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        return _error(422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON decode error"}])
    if not isinstance(body, dict):
        return _error(422, [{"type": "model_attributes_type", "loc": ["body"], "msg": "Input should be an object"}])
    return body


def _entities(source: Any) -> dict[str, str]:
    return {k: str(source[k]) for k in ENTITIES if source.get(k) not in (None, "")}


def create_mem0_app(rig: Mem0Rig) -> Starlette:
    """Mem0's REST routes over ``rig.memory``."""

    async def guarded(request: Request, handler: Any) -> Response:
        body: Any = None
        if request.method in ("POST", "PUT"):
            body = await _body(request)
        if rig.down:
            answer: Response = _error(503, "Service Unavailable")
        elif not _authorized(rig, request):
            answer = _error(401, "Invalid or missing API key")
        elif isinstance(body, JSONResponse):
            answer = body
        else:
            try:
                answer = await handler(request, body)
            except Exception as exc:  # as Mem0's server: any error of the engine is a 500 with its words
                answer = _error(500, str(exc))
        rig.requests.append(
            {
                "method": request.method,
                "path": request.url.path,
                "query": str(request.query_params),
                "body": body,
                "status": answer.status_code,
            }
        )
        return answer

    async def add(request: Request, body: dict[str, Any]) -> Response:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages
        ):
            return _error(422, [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required"}])
        entities = _entities(body)
        if not entities:
            return _error(400, "At least one identifier (user_id, agent_id, run_id) is required.")
        metadata = body.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            return _error(422, [{"type": "dict_type", "loc": ["body", "metadata"], "msg": "Input should be an object"}])
        infer = body.get("infer", True)
        failing = rig.slow_adds > 0 and rig.add_status is not None
        if rig.slow_adds > 0:
            rig.slow_adds -= 1
            await asyncio.sleep(rig.add_delay)
            if failing and not rig.write_then_fail:
                return _error(rig.add_status or 503, "Service Unavailable")
        result = await rig.call(rig.memory.add, messages, metadata=metadata, infer=bool(infer), **entities)
        if failing:  # written, and the answer lost on its way: a gateway's 502/503
            return _error(rig.add_status or 503, "Service Unavailable")
        return JSONResponse(result)

    async def listed(request: Request, body: Any) -> Response:
        entities = _entities(request.query_params)
        try:
            top_k = int(request.query_params.get("top_k", "100"))
        except ValueError:
            return _error(
                422, [{"type": "int_parsing", "loc": ["query", "top_k"], "msg": "Input should be an integer"}]
            )
        if not 1 <= top_k <= 1000:
            return _error(422, [{"type": "less_than_equal", "loc": ["query", "top_k"], "msg": "1 <= top_k <= 1000"}])
        if not entities:  # everything: Mem0's admin listing, straight from the vector store
            found = await rig.call(rig.memory.vector_store.list, top_k=top_k)
            rows = found[0] if found and isinstance(found[0], list) else found
            return JSONResponse({"results": [{"id": str(r.id), "memory": (r.payload or {}).get("data")} for r in rows]})
        return JSONResponse(await rig.call(rig.memory.get_all, filters=entities, top_k=top_k))

    async def one(request: Request, body: Any) -> Response:
        memory_id = request.path_params["memory_id"]
        if request.method == "GET":  # an unknown id: the engine's None, answered as JSON null
            return JSONResponse(await rig.call(rig.memory.get, memory_id))
        if request.method == "DELETE":
            await rig.call(rig.memory.delete, memory_id)
            return JSONResponse({"message": "Memory deleted successfully"})
        text, metadata = body.get("text"), body.get("metadata")
        if text is not None and not isinstance(text, str):
            return _error(422, [{"type": "string_type", "loc": ["body", "text"], "msg": "Input should be a string"}])
        return JSONResponse(await rig.call(rig.memory.update, memory_id, text=text, metadata=metadata))

    async def history(request: Request, body: Any) -> Response:
        return JSONResponse(
            await rig.call(rig.memory.history, request.path_params["memory_id"]),
        )

    async def search(request: Request, body: dict[str, Any]) -> Response:
        query = body.get("query")
        if not isinstance(query, str):
            return _error(422, [{"type": "missing", "loc": ["body", "query"], "msg": "Field required"}])
        filters = body.get("filters") or {}
        if not isinstance(filters, dict):
            return _error(422, [{"type": "dict_type", "loc": ["body", "filters"], "msg": "Input should be an object"}])
        filters = {**filters, **_entities(body)}  # deprecated top-level ids, moved into filters
        kwargs: dict[str, Any] = {"filters": filters}
        for key in ("top_k", "threshold"):
            if body.get(key) is not None:
                kwargs[key] = body[key]
        return JSONResponse(await rig.call(rig.memory.search, query, **kwargs))

    async def delete_all(request: Request, body: Any) -> Response:
        entities = _entities(request.query_params)
        if not entities:
            return _error(400, "At least one identifier is required.")
        await rig.call(rig.memory.delete_all, **entities)
        return JSONResponse({"message": "All relevant memories deleted"})

    async def reset(request: Request, body: Any) -> Response:
        await rig.call(rig.memory.reset)
        return JSONResponse({"message": "Reset all memories"})

    def route(path: str, handler: Any, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            return await guarded(request, handler)

        return Route(path, endpoint, methods=methods)

    return Starlette(
        routes=[
            route("/memories", add, ["POST"]),
            route("/memories", listed, ["GET"]),
            route("/memories", delete_all, ["DELETE"]),
            route("/memories/{memory_id}", one, ["GET", "PUT", "DELETE"]),
            route("/memories/{memory_id}/history", history, ["GET"]),
            route("/search", search, ["POST"]),
            route("/reset", reset, ["POST"]),
        ]
    )


def open_memory(directory: Path, llm_url: str) -> Any:
    """Mem0's ``Memory`` on disk in ``directory``, telemetry off, its config dir there too."""
    os.environ["MEM0_TELEMETRY"] = "false"
    os.environ.setdefault("MEM0_DIR", str(directory / "mem0-home"))
    from mem0 import Memory

    return Memory.from_config(memory_config(directory, llm_url))


@contextlib.contextmanager
def serve_mem0(
    llm_url: str, *, api_key: str = "mem0-rig-key", directory: Path | None = None
) -> Iterator[tuple[str, Mem0Rig]]:
    """Mem0's REST server over the real engine on a loopback port: its URL and the rig."""
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mem0-rig-")))
        rig = Mem0Rig(open_memory(directory, llm_url), api_key)
        stack.callback(close_memory, rig.memory)
        url = stack.enter_context(serve_in_thread(create_mem0_app(rig)))
        yield url, rig


def close_memory(memory: Any) -> None:
    """The engine's files closed (its qdrant client, its history database) before they are removed."""
    memory.vector_store.client.close()
    memory.db.close()
