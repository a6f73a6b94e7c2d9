"""A Hindsight stand-in for failure injection: the self-hosted store's Hindsight-compatible app
behind fault-injecting ASGI middleware.

The app is memwarden's own (``memwarden.store.server.app.create_local_app`` over a
``LocalStore`` in a directory, hashing embedder), so there is one stand-in, with the shapes and
rules that ``tests/interop/test_interop_local.py`` checks against the real Hindsight 1.1.0. The
middleware adds:

* a log of every request (method, path, query, JSON body, status it got): ``requests``, ``seen``;
* ``faults`` (:class:`Fault`): matching requests answered with an error status, or delayed,
  after some have passed, for a number of times;
* Hindsight's behaviours the store does not have:

  - ``stats_ttl`` — stats cached per bank for this many seconds unless ``refresh=true``, as
    Hindsight caches them (60 s by default);
  - ``consolidation_seconds`` — after an async retain the bank reports pending operations and
    consolidation for this long, and its observations keep growing (background consolidation);
  - ``drop_on_entity_labels`` — a config PATCH that sets ``entity_labels`` silently deletes that
    many memories with their documents (the incident config governance exists for); with
    ``drop_on_labels_reset`` a PATCH that resets them (null, as a rollback does) drops them too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from memwarden.backends.types import MemoryQuery
from memwarden.db.database import Database
from memwarden.store.embedder import HashingEmbedder
from memwarden.store.errors import StoreError
from memwarden.store.local import LocalStore
from memwarden.store.server.app import create_local_app
from testing.loopback import serve_in_thread

BANK = re.compile(r"^/v1/default/banks/([^/]+)")


@dataclass
class Fault:
    """Requests whose method is ``method`` and whose path ``path`` (a regular expression) matches:
    the first ``after`` pass untouched, then ``times`` of them (all, if None) wait ``delay``
    seconds and are answered ``status`` with ``{"detail": detail}`` — or, with ``status`` None,
    passed on after the wait (a slow route)."""

    method: str
    path: str
    status: int | None = 500
    detail: Any = "injected fault"
    delay: float = 0.0
    after: int = 0
    times: int | None = None
    matched: int = field(default=0, init=False)

    def applies(self, method: str, path: str) -> bool:
        if method != self.method or not re.search(self.path, path):
            return False
        self.matched += 1
        n = self.matched - self.after
        return n > 0 and (self.times is None or n <= self.times)


@dataclass
class Seen:
    """One request as the stand-in received and answered it."""

    method: str
    path: str
    query: str
    body: Any
    status: int
    headers: dict[str, str] = field(default_factory=dict)


class Standin:
    """The ASGI app: the store's Hindsight API with the knobs above (set them at any time)."""

    def __init__(self, data_dir: Path, *, stats_ttl: float = 60.0, consolidation_seconds: float = 0.0) -> None:
        self.ledger = Database.open(data_dir, mirror=False)
        self.store = LocalStore(self.ledger, HashingEmbedder())
        self.app = create_local_app(self.store)
        self.url = ""  # set by running_standin
        self.faults: list[Fault] = []
        self.requests: list[Seen] = []
        self.stats_ttl = stats_ttl
        self.consolidation_seconds = consolidation_seconds
        self.drop_on_entity_labels = 0
        self.drop_on_labels_reset = False
        self._busy_until: dict[str, float] = {}
        self._observations: dict[str, int] = {}
        self._stats_cache: dict[str, tuple[float, bytes]] = {}

    def seen(self, method: str, path: str) -> list[Seen]:
        """The requests so far with this method whose path matches ``path`` (a regular expression)."""
        return [s for s in self.requests if s.method == method and re.search(path, s.path)]

    def close(self) -> None:
        self.ledger.close()

    # -- the middleware -------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path, query = scope["method"], scope["path"], scope["query_string"].decode("latin-1")
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status, headers, answer = await self._answer(scope, method, path, query, raw, body)
        sent = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        self.requests.append(Seen(method, path, query, body, status, sent))
        headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(answer)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.store.drain()  # async retains still running
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _answer(
        self, scope: Scope, method: str, path: str, query: str, raw: bytes, body: Any
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        for fault in self.faults:
            if fault.applies(method, path):
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                if fault.status is not None:
                    return fault.status, [(b"content-type", b"application/json")], _json({"detail": fault.detail})
                break
        bank_match = BANK.match(path)
        bank = bank_match.group(1) if bank_match else ""
        if method == "GET" and path.endswith("/stats") and bank:
            return await self._stats(scope, raw, bank, "refresh=true" in query)
        status, headers, answer = await self._call(scope, raw)
        if status == 200 and isinstance(body, dict):
            if method == "POST" and path.endswith("/memories") and body.get("async") and self.consolidation_seconds:
                self._busy_until[bank] = time.monotonic() + self.consolidation_seconds
            updates = body.get("updates")
            if method == "PATCH" and path.endswith("/config") and isinstance(updates, dict):
                labels_set = "entity_labels" in updates and (
                    updates["entity_labels"] is not None or self.drop_on_labels_reset
                )
                if labels_set and self.drop_on_entity_labels:
                    await self.drop(bank, self.drop_on_entity_labels)
        return status, headers, answer

    async def _call(self, scope: Scope, raw: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The store's app on this request; its answer, buffered."""
        sent = False
        start: Message = {}
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return int(start["status"]), list(start.get("headers", [])), b"".join(chunks)

    async def _stats(self, scope: Scope, raw: bytes, bank: str, refresh: bool) -> tuple[int, list[Any], bytes]:
        headers = [(b"content-type", b"application/json")]
        now = time.monotonic()
        cached = self._stats_cache.get(bank)
        if cached is not None and not refresh and now - cached[0] <= self.stats_ttl:
            return 200, headers, cached[1]
        status, _, answer = await self._call(scope, raw)
        if status != 200:
            return status, headers, answer
        stats = json.loads(answer)
        busy = now < self._busy_until.get(bank, 0.0)
        if busy:  # consolidation reshapes observations while it runs
            self._observations[bank] = self._observations.get(bank, 0) + 1
        observations = self._observations.get(bank, 0)
        if observations:
            stats["nodes_by_fact_type"] = {**stats["nodes_by_fact_type"], "observation": observations}
            stats["total_nodes"] += observations
            stats["total_observations"] = observations
        if busy:
            stats["pending_operations"] = max(1, stats["pending_operations"])
            stats["pending_consolidation"] = 1
        answer = _json(stats)
        self._stats_cache[bank] = (now, answer)
        return 200, headers, answer

    async def drop(self, bank: str, n: int) -> None:
        """Silently delete ``n`` memories of ``bank`` with their documents."""
        listed = await self.store.list_units(bank, MemoryQuery(limit=n))
        for unit in listed.items:
            with contextlib.suppress(StoreError):  # a document already gone with an earlier memory
                await self.store.delete_document(bank, str(unit.document_id))


def _json(payload: Any) -> bytes:
    return json.dumps(payload).encode()


@contextlib.contextmanager
def running_standin(data_dir: Path, **knobs: Any) -> Iterator[Standin]:
    """A :class:`Standin` over a store in ``data_dir`` on a real loopback port (``.url``)."""
    standin = Standin(data_dir, **knobs)
    try:
        with serve_in_thread(standin) as url:
            standin.url = url
            yield standin
    finally:
        standin.close()
