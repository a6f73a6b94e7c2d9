"""The Hindsight backend: HTTP to a Hindsight server (>= 0.4.11; shapes of 1.1.0).

Two ways in:

* the :class:`~memwarden.backends.base.MemoryBackend` methods, one JSON call each in neutral types
  (``backends/hindsight_json.py`` translates), used by governance;
* :meth:`HindsightBackend.send_raw`, a streamed request whose response the proxy streams back
  untouched; used for every route memwarden does not govern.

The backend key is memwarden's: with ``api_key`` set, every request carries it; otherwise the
client's ``Authorization`` header is passed on only when ``forward_client_authorization`` is on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from memwarden.backends import hindsight_json as hj
from memwarden.backends.base import (
    CONFIG_GUARD,
    DOCUMENTS,
    MEMORY_STATES,
    OPERATIONS,
    RAW_PASSTHROUGH,
    TAG_GROUPS,
    BackendHealth,
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
)
from memwarden.backends.transport import Body, HttpxRawSender, RawResponse, RawSender, SendError, is_timeout
from memwarden.backends.types import (
    JSON,
    BankConfig,
    BankStats,
    Document,
    Item,
    Memory,
    MemoryQuery,
    Page,
    Recalled,
    RecallQuery,
    Receipt,
)
from memwarden.metrics import Metrics

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})


def bank_path(bank_id: str, suffix: str = "") -> str:
    """``/v1/default/banks/<quoted bank>`` + suffix, quoting as hindsight-client does (safe='')."""
    return f"/v1/default/banks/{quote(bank_id, safe='')}{suffix}"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: treated as "no hint"


def _error_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {"detail": response.text[:2000]}


class HindsightBackend:
    """Adapter for the Hindsight HTTP API. ``client`` is owned by the caller (the app lifespan)."""

    kind = "hindsight"
    capabilities = frozenset({CONFIG_GUARD, DOCUMENTS, MEMORY_STATES, TAG_GROUPS, OPERATIONS, RAW_PASSTHROUGH})

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        raw: RawSender | None = None,
        api_key: str | None = None,
        forward_client_authorization: bool = False,
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self._metrics = metrics
        self._raw = raw or HttpxRawSender(client)
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._forward_client_authorization = forward_client_authorization

    # -- raw pass-through -------------------------------------------------------------------

    def _auth_headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        if self._api_key:
            kept = [(k, v) for k, v in headers if k.lower() != "authorization"]
            return [*kept, ("authorization", f"Bearer {self._api_key}")]
        if self._forward_client_authorization:
            return headers
        return [(k, v) for k, v in headers if k.lower() != "authorization"]

    async def send_raw(
        self,
        method: str,
        target: str,
        headers: Iterable[tuple[str, str]],
        content: Body,
    ) -> RawResponse:
        """Send one request as is and return the response with its body not yet read.

        ``target`` is the raw path plus query string, already percent-encoded. The caller must
        ``aclose()`` the response. Raises :class:`BackendUnavailable` / :class:`BackendTimeout`
        when no response could be had; any HTTP status, 5xx included, is returned.
        """
        start = time.perf_counter()
        try:
            response = await self._raw.send(method, self.base_url + target, self._auth_headers(list(headers)), content)
        except SendError as exc:
            self._observe("passthrough", method, "timeout" if exc.timeout else "unreachable", start)
            if exc.timeout:
                raise BackendTimeout(f"Hindsight at {self.base_url} timed out: {exc}") from exc
            raise BackendUnavailable(f"Hindsight at {self.base_url} is unreachable: {exc}") from exc
        self._observe("passthrough", method, response.status_code, start)
        return response

    def _observe(self, kind: str, method: str, outcome: int | str, start: float) -> None:
        if self._metrics is not None:
            method = method if method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS") else "other"
            self._metrics.backend_call(kind, method, outcome, time.perf_counter() - start)

    def _unavailable(self, exc: httpx.TransportError) -> BackendUnavailable:
        if is_timeout(exc):
            return BackendTimeout(f"Hindsight at {self.base_url} timed out ({type(exc).__name__})")
        cause = str(exc) or type(exc).__name__
        return BackendUnavailable(f"Hindsight at {self.base_url} is unreachable: {cause}")

    # -- JSON calls -------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> JSON:
        headers = self._auth_headers([])
        start = time.perf_counter()
        try:
            response = await self._client.request(
                method, self.base_url + path, params=params, json=json, headers=headers
            )
        except httpx.TransportError as exc:
            self._observe("governance", method, "timeout" if is_timeout(exc) else "unreachable", start)
            raise self._unavailable(exc) from exc
        self._observe("governance", method, response.status_code, start)
        if response.status_code >= 500 or response.status_code in RETRYABLE_STATUS:
            raise BackendUnavailable(
                f"Hindsight {method} {path} answered {response.status_code}",
                status=response.status_code,
                retry_after=_retry_after(response.headers.get("retry-after")),
            )
        if response.status_code >= 400:
            raise BackendRejected(response.status_code, _error_body(response), response.headers)
        body = response.json()
        return body if isinstance(body, dict) else {"value": body}

    async def health(self) -> BackendHealth:
        start = time.perf_counter()
        try:
            body = await self._call("GET", "/health")
        except BackendUnavailable as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=str(exc))
        except BackendRejected as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=f"/health answered {exc.status}")
        latency = (time.perf_counter() - start) * 1000
        healthy = body.get("status") == "healthy"
        version: str | None = None
        try:
            version = (await self._call("GET", "/version")).get("api_version")
        except (BackendUnavailable, BackendRejected):
            version = None
        return BackendHealth(
            kind=self.kind,
            healthy=healthy,
            detail=str(body.get("status", "unknown")),
            latency_ms=round(latency, 2),
            version=version,
            extra={"url": self.base_url},
        )

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        body = hj.retain_json(list(items), tuple(document_tags), wait=wait)
        return hj.receipt_from_json(await self._call("POST", bank_path(bank_id, "/memories"), json=body))

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        answer = await self._call("POST", bank_path(bank_id, "/memories/recall"), json=hj.recall_json(query))
        return hj.recalled_from_json(answer)

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]:
        params = hj.memory_query_params(query)
        return hj.page_from_json(
            await self._call("GET", bank_path(bank_id, "/memories/list"), params=params), hj.listed_memory
        )

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]:
        params = {"limit": limit, "offset": offset}
        return hj.page_from_json(
            await self._call("GET", bank_path(bank_id, "/documents"), params=params), hj.document_from_json
        )

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        found = await self._call("GET", bank_path(bank_id, f"/memories/{quote(memory_id, safe='')}"))
        return hj.memory_from_json(found)  # its kind as "type", as a recall's hits

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        changes: JSON = {"state": state}
        if reason is not None:
            changes["reason"] = reason
        await self._call("PATCH", bank_path(bank_id, f"/memories/{quote(memory_id, safe='')}"), json=changes)

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        await self._call("DELETE", bank_path(bank_id, f"/documents/{quote(document_id, safe='/')}"))

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        path = bank_path(bank_id, f"/documents/{quote(document_id, safe='/')}")
        return hj.document_from_json(await self._call("GET", path))

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        held = set()
        for document_id in dict.fromkeys(document_ids):
            try:
                await self._call("GET", bank_path(bank_id, f"/documents/{quote(document_id, safe='/')}"))
            except BackendRejected as exc:
                if exc.status == 404:
                    continue
                raise
            held.add(document_id)
        return held

    async def get_config(self, bank_id: str) -> BankConfig:
        return hj.config_from_json(await self._call("GET", bank_path(bank_id, "/config")))

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        answer = await self._call("PATCH", bank_path(bank_id, "/config"), json={"updates": dict(updates)})
        return hj.config_from_json(answer)

    async def reset_config(self, bank_id: str) -> BankConfig:
        return hj.config_from_json(await self._call("DELETE", bank_path(bank_id, "/config")))

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats:
        params = {"refresh": "true"} if refresh else None
        return hj.stats_from_json(await self._call("GET", bank_path(bank_id, "/stats"), params=params))
