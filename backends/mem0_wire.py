"""Mem0's two HTTP dialects, as the Mem0 backend calls them: the open-source REST server's
(``server/main.py``: ``POST /memories``, ``GET /memories``, ``POST /search`` … with ``X-API-Key``)
and the hosted platform's (the paths ``MemoryClient`` calls: ``POST /v3/memories/add/``, ``POST
/v3/memories/`` … with ``Authorization: Token``). Each answers the same few calls in Mem0's memory
JSON; ``backends/mem0.py`` does the rest in neutral types.

The platform's add is asynchronous: it answers an event id, and the event is polled
(``GET /v1/event/{id}/``, backing off from 0.1 to 2 s) until it says SUCCEEDED — its results are the
memories made — or FAILED (``BackendUnavailable``: delivered again later). An event still pending
after ``event_timeout`` seconds is a delivery not known to have landed (``BackendUnavailable``): the
outbox delivers it again, and before that the pending event is waited for (``settle``) so that the
lookup before every write sees it if it landed. That memory is this process's: a restart between
the two forgets the event (then a late add can sit beside its redelivery).

Mem0 refusing memwarden's own key (401, 403) is ``BackendUnavailable``: an operator's fix, retried,
never answered to a client as its own refusal; a 429's ``Retry-After`` is kept.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from memwarden.backends import mem0_json as mj
from memwarden.backends.base import BackendRejected, BackendTimeout, BackendUnavailable
from memwarden.backends.transport import is_timeout
from memwarden.metrics import Metrics

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
MAX_LISTED = 1000  # Mem0 lists at most this many memories per call (``top_k`` and ``page_size`` ≤ 1000)
JSON = dict[str, Any]


class Http:
    """One Mem0 server: a call sent with its auth header, its failures as the backend errors."""

    def __init__(self, client: httpx.AsyncClient, base_url: str, headers: Mapping[str, str]) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers)
        self.metrics: Metrics | None = None

    async def __call__(
        self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json: Any = None
    ) -> Any:
        start = time.perf_counter()
        try:
            response = await self.client.request(
                method, self.base_url + path, params=params, json=json, headers=self.headers
            )
        except httpx.TransportError as exc:
            self._observe(method, "timeout" if is_timeout(exc) else "unreachable", start)
            if is_timeout(exc):
                raise BackendTimeout(f"Mem0 at {self.base_url} timed out ({type(exc).__name__})") from exc
            raise BackendUnavailable(f"Mem0 at {self.base_url} is unreachable: {exc or type(exc).__name__}") from exc
        self._observe(method, response.status_code, start)
        if response.status_code >= 500 or response.status_code in RETRYABLE_STATUS:
            raise BackendUnavailable(
                f"Mem0 {method} {path} answered {response.status_code}",
                retry_after=_seconds(response.headers.get("retry-after")),
            )
        if response.status_code in (
            401,
            403,
        ):  # memwarden's own key, not the client's: retried, never the client's fault
            raise BackendUnavailable(
                f"Mem0 refused memwarden's key ({response.status_code}): check [backends.mem0] api_key"
            )
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = {"detail": response.text[:2000]}
            raise BackendRejected(response.status_code, body, response.headers)
        try:
            return response.json()
        except ValueError as exc:
            raise BackendUnavailable(f"Mem0 {method} {path} answered with a body that is not JSON") from exc

    def _observe(self, method: str, outcome: int | str, start: float) -> None:
        if self.metrics is not None:
            self.metrics.backend_call("governance", method, outcome, time.perf_counter() - start)


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: no hint


class Wire(Protocol):
    """The calls the Mem0 backend makes, in one dialect. ``scope``: entity ids (``user_id`` …,
    ``run_id``); memories are Mem0's JSON objects."""

    http: Http
    name: str

    async def probe(self) -> None: ...

    async def settle(self, key: str) -> None:
        """Wait for an add made under ``key`` (a bank's document) that was not known to have landed."""
        ...

    async def add(self, body: JSON, key: str) -> list[Mapping[str, Any]]: ...

    async def listed(self, scope: Mapping[str, str]) -> list[Mapping[str, Any]]: ...

    async def search(self, query: str, scope: Mapping[str, str], top_k: int) -> list[Mapping[str, Any]]: ...

    async def get(self, memory_id: str) -> Any: ...

    async def delete(self, memory_id: str) -> None: ...

    async def delete_all(self, scope: Mapping[str, str]) -> None: ...


class RestWire:
    """Mem0's open-source REST server."""

    name = "rest"

    def __init__(self, http: Http) -> None:
        self.http = http

    async def probe(self) -> None:  # the server has no health route: the cheapest authenticated read
        await self.http("GET", "/memories", params={"user_id": "memwarden-health", "top_k": 1})

    async def settle(self, key: str) -> None:  # an add answers once it is stored: nothing is ever pending
        return

    async def add(self, body: JSON, key: str) -> list[Mapping[str, Any]]:
        return mj.results_of(await self.http("POST", "/memories", json=body))

    async def listed(self, scope: Mapping[str, str]) -> list[Mapping[str, Any]]:
        return mj.results_of(await self.http("GET", "/memories", params={**scope, "top_k": MAX_LISTED}))

    async def search(self, query: str, scope: Mapping[str, str], top_k: int) -> list[Mapping[str, Any]]:
        return await _search(self.http, "/search", query, scope, top_k)

    async def get(self, memory_id: str) -> Any:
        return await self.http("GET", f"/memories/{quote(memory_id, safe='')}")

    async def delete(self, memory_id: str) -> None:
        await self.http("DELETE", f"/memories/{quote(memory_id, safe='')}")

    async def delete_all(self, scope: Mapping[str, str]) -> None:
        await self.http("DELETE", "/memories", params=dict(scope))


class PlatformWire:
    """Mem0's hosted platform (the v3 API of ``mem0ai`` 2.x)."""

    name = "platform"

    def __init__(self, http: Http, *, event_timeout: float = 30.0, poll: float = 0.1, max_poll: float = 2.0) -> None:
        self.http = http
        self.event_timeout = event_timeout
        self.poll, self.max_poll = poll, max_poll
        self.pending: dict[str, str] = {}  # a document's add not known to have landed: its event id

    async def probe(self) -> None:
        await self.http("GET", "/v1/ping/")

    async def settle(self, key: str) -> None:
        """An add of this document that was still pending: waited for before the document is looked
        up again, so that a redelivery does not add it a second time beside it."""
        event_id = self.pending.get(key)
        if event_id is not None:
            await self._event(event_id, key)
            self.pending.pop(key, None)

    async def add(self, body: JSON, key: str) -> list[Mapping[str, Any]]:
        answer = await self.http("POST", "/v3/memories/add/", json=body)
        event_id = answer.get("event_id") if isinstance(answer, Mapping) else None
        if not isinstance(event_id, str):  # answered at once (a synchronous add)
            return mj.results_of(answer)
        return await self._event(event_id, key)

    async def _event(self, event_id: str, key: str) -> list[Mapping[str, Any]]:
        """The add's event polled (backing off to ``max_poll``) until it is done: the memories it made."""
        deadline = time.monotonic() + self.event_timeout
        wait = self.poll
        while True:
            event = await self.http("GET", f"/v1/event/{quote(event_id, safe='')}/")
            status = event.get("status") if isinstance(event, Mapping) else None
            if status == "SUCCEEDED":
                return [_flat(r) for r in mj.results_of(event)]
            if status == "FAILED":  # Mem0's processing failed: nothing stored, delivered again later
                raise BackendUnavailable(f"Mem0 failed the add (event {event_id}): {event.get('error')}")
            if time.monotonic() >= deadline:
                self.pending[key] = event_id
                raise BackendUnavailable(f"Mem0's add event {event_id} still {status} after {self.event_timeout:g} s")
            await asyncio.sleep(wait)
            wait = min(self.max_poll, wait * 2)

    async def listed(self, scope: Mapping[str, str]) -> list[Mapping[str, Any]]:
        filters = {"AND": [{k: v} for k, v in scope.items()]}
        answer = await self.http(
            "POST", "/v3/memories/", params={"page": 1, "page_size": MAX_LISTED}, json={"filters": filters}
        )
        return mj.results_of(answer)

    async def search(self, query: str, scope: Mapping[str, str], top_k: int) -> list[Mapping[str, Any]]:
        return await _search(self.http, "/v3/memories/search/", query, scope, top_k)

    async def get(self, memory_id: str) -> Any:
        return await self.http("GET", f"/v1/memories/{quote(memory_id, safe='')}/")

    async def delete(self, memory_id: str) -> None:
        await self.http("DELETE", f"/v1/memories/{quote(memory_id, safe='')}/")

    async def delete_all(self, scope: Mapping[str, str]) -> None:
        await self.http("DELETE", "/v1/memories/", params=dict(scope))


async def _search(http: Http, path: str, query: str, scope: Mapping[str, str], top_k: int) -> list[Mapping[str, Any]]:
    """A search in both dialects' body: the scope as Mem0's filters, every hit (``threshold: 0``)."""
    body = {"query": query, "filters": dict(scope), "top_k": top_k, "threshold": 0}
    return mj.results_of(await http("POST", path, json=body))


def _flat(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """An event's result (``{id, data: {memory}, event}``) as a memory (``{id, memory, event}``)."""
    data = result.get("data")
    if isinstance(data, Mapping) and "memory" not in result:
        return {**result, "memory": data.get("memory")}
    return result


def wire(
    dialect: str, client: httpx.AsyncClient, base_url: str, api_key: str | None, *, event_timeout: float = 30.0
) -> Wire:
    """The dialect's wire to ``base_url``, its key in the dialect's header."""
    if dialect == "platform":
        return PlatformWire(
            Http(client, base_url, {"authorization": f"Token {api_key}"} if api_key else {}),
            event_timeout=event_timeout,
        )
    return RestWire(Http(client, base_url, {"x-api-key": api_key} if api_key else {}))
