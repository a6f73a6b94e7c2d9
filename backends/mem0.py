"""The Mem0 backend: memwarden in front of Mem0's open-source REST server
(``--upstream mem0+http://host:port``), in neutral types (``backends/mem0_json.py`` translates).

What it maps, and how (the reasons are in ``docs/backends/mem0.md``):

* **bank** → a Mem0 entity id (``user_id`` unless ``backends.mem0.entity`` says ``agent_id``);
* **retain** → one ``POST /memories`` per item, ``infer: false`` (verbatim: memwarden judged and
  deduplicated it) unless the bank is one of ``extract_banks`` (Mem0's own extraction runs on what
  memwarden kept). A document is a Mem0 run: retaining a document again **replaces** it, as
  Hindsight does — its memories are listed by ``run_id`` first and deleted, unless they already
  are the item verbatim (a delivery that landed and whose answer was lost: nothing is stored
  twice, the outbox's redelivery included);
* **recall** → ``POST /search`` in the bank, ``threshold: 0``, tag filters applied here on what
  Mem0 returns (Mem0 has no tags; its metadata filters differ by vector store, and some drop
  them silently), the answer cut to the token budget;
* **list, get, documents, stats** → ``GET /memories`` by entity (and run), ``GET /memories/{id}``;
  Mem0 lists at most 1,000 memories per call, so a bank past that is listed and counted up to it
  (``Page.total`` is then None: not known);
* **delete a document** → ``DELETE /memories?<entity>=<bank>&run_id=<document>``.

What Mem0 cannot do is declared, not pretended: no per-bank config (no ``CONFIG_GUARD``: the
config routes answer 501), no memory states (``set_memory_state`` → 501), no operations (every
retain is synchronous on the open-source server).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from memwarden.backends import mem0_json as mj
from memwarden.backends.base import (
    DOCUMENTS,
    TAG_GROUPS,
    BackendHealth,
    BackendRejected,
    BackendTimeout,
    BackendUnavailable,
)
from memwarden.backends.transport import is_timeout
from memwarden.backends.types import (
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
from memwarden.policies import tagfilter

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
MAX_LISTED = 1000  # Mem0's server lists at most this many memories per call (``top_k`` ≤ 1000)
CHARS_PER_TOKEN = 4  # a recall's budget, counted as Hindsight's clients expect it: ~4 characters a token
DEFAULT_RECALL_TOKENS = 4096


def _unsupported(what: str) -> BackendRejected:
    return BackendRejected(501, {"detail": f"memwarden in front of Mem0: {what}"})


class Mem0Backend:
    """Adapter for Mem0's open-source REST server. ``client`` is owned by the caller."""

    kind = "mem0"
    capabilities = frozenset({DOCUMENTS, TAG_GROUPS})

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        api_key: str | None = None,
        entity: str = "user_id",
        extract_banks: Sequence[str] = (),
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._entity = entity
        self._extract = frozenset(extract_banks)
        self.metrics = metrics

    # -- the wire ---------------------------------------------------------------------------

    async def _call(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json: Any = None) -> Any:
        headers = {"x-api-key": self._api_key} if self._api_key else {}
        start = time.perf_counter()
        try:
            response = await self._client.request(
                method, self.base_url + path, params=params, json=json, headers=headers
            )
        except httpx.TransportError as exc:
            self._observe(method, "timeout" if is_timeout(exc) else "unreachable", start)
            if is_timeout(exc):
                raise BackendTimeout(f"Mem0 at {self.base_url} timed out ({type(exc).__name__})") from exc
            raise BackendUnavailable(f"Mem0 at {self.base_url} is unreachable: {exc or type(exc).__name__}") from exc
        self._observe(method, response.status_code, start)
        if response.status_code >= 500 or response.status_code in RETRYABLE_STATUS:
            raise BackendUnavailable(f"Mem0 {method} {path} answered {response.status_code}", status=None)
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

    def _scope(self, bank: str, document_id: str | None = None) -> dict[str, str]:
        scope = {self._entity: mj.entity_id(bank)}
        if document_id is not None:
            scope["run_id"] = mj.entity_id(document_id)
        return scope

    async def _listed(self, bank: str, document_id: str | None = None) -> list[Memory]:
        params = {**self._scope(bank, document_id), "top_k": MAX_LISTED}
        found = [mj.memory_from_json(m) for m in mj.results_of(await self._call("GET", "/memories", params=params))]
        if document_id is not None:  # a digest-named run: only its own document's memories
            found = [m for m in found if m.document_id == document_id]
        return found

    # -- the protocol -----------------------------------------------------------------------

    async def health(self) -> BackendHealth:
        start = time.perf_counter()
        try:  # Mem0's server has no health route: the cheapest authenticated read stands for one
            await self._call("GET", "/memories", params={self._entity: "memwarden-health", "top_k": 1})
        except BackendUnavailable as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=str(exc))
        except BackendRejected as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=f"GET /memories answered {exc.status}")
        latency = (time.perf_counter() - start) * 1000
        return BackendHealth(
            kind=self.kind, healthy=True, detail="healthy", latency_ms=round(latency, 2), extra={"url": self.base_url}
        )

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        infer = bank_id in self._extract
        stored = 0
        for item in items:
            if document_tags:
                item = _with_tags(item, document_tags)
            if item.document_id is not None:
                held = await self._listed(bank_id, item.document_id)
                if not infer and mj.same_item(held, item):
                    stored += 1
                    continue
                for old in held:  # the document retained again: replaced, as Hindsight replaces it
                    await self._delete(old.id)
            answer = await self._call("POST", "/memories", json=mj.add_json(self._entity, bank_id, item, infer=infer))
            stored += 1 if not infer else len(mj.results_of(answer))
        return Receipt(items=stored)

    async def _delete(self, memory_id: str) -> None:
        try:
            await self._call("DELETE", f"/memories/{quote(memory_id, safe='')}")
        except BackendRejected as exc:
            if exc.status != 404:  # gone already: what was asked
                raise

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        budget = (query.max_tokens or DEFAULT_RECALL_TOKENS) * CHARS_PER_TOKEN
        predicate = tagfilter.build(query.tags.tags, query.tags.match or "any", query.tags.groups)
        body = {"query": query.text, "filters": self._scope(bank_id), "top_k": MAX_LISTED if predicate else 100}
        body["threshold"] = 0
        hits = [mj.memory_from_json(m) for m in mj.results_of(await self._call("POST", "/search", json=body))]
        kept: list[Memory] = []
        used = 0
        for hit in hits:
            if predicate is not None and not predicate(frozenset(hit.tags)):
                continue
            if query.kinds is not None and "world" not in query.kinds:
                continue
            used += len(hit.text)
            if used > budget and kept:
                break
            kept.append(hit)
        return Recalled(memories=kept)

    async def list_memories(self, bank_id: str, query: MemoryQuery) -> Page[Memory]:
        if query.state not in (None, "valid"):
            return Page(items=[], total=0)  # Mem0 holds no invalidated memories
        found = await self._listed(bank_id, query.document_id)
        predicate = tagfilter.build(query.tags.tags, query.tags.match or "any", query.tags.groups)
        if predicate is not None:
            found = [m for m in found if predicate(frozenset(m.tags))]
        total = len(found) if len(found) < MAX_LISTED else None
        return Page(items=found[query.offset : query.offset + query.limit], total=total)

    async def list_documents(self, bank_id: str, *, limit: int, offset: int) -> Page[Document]:
        found = await self._listed(bank_id)
        documents: dict[str, list[Memory]] = {}
        for memory in found:
            if memory.document_id is not None:
                documents.setdefault(memory.document_id, []).append(memory)
        listed = [_document(d, held) for d, held in documents.items()]
        total = len(listed) if len(found) < MAX_LISTED else None
        return Page(items=listed[offset : offset + limit], total=total)

    async def get_memory(self, bank_id: str, memory_id: str) -> Memory:
        try:
            found = await self._call("GET", f"/memories/{quote(memory_id, safe='')}")
        except BackendRejected as exc:
            if exc.status in (400, 404):
                raise BackendRejected(404, {"detail": f"Memory '{memory_id}' not found"}) from exc
            raise
        if not isinstance(found, Mapping) or found.get(self._entity) != mj.entity_id(bank_id):
            raise BackendRejected(404, {"detail": f"Memory '{memory_id}' not found"})  # another bank's
        return mj.memory_from_json(found)

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        raise _unsupported("Mem0 has no memory states (invalidate, validate); delete the memory instead")

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        held = await self._listed(bank_id, document_id)
        if not held:
            raise BackendRejected(404, {"detail": f"Document '{document_id}' not found"})
        for memory in held:
            await self._delete(memory.id)

    async def held_documents(self, bank_id: str, document_ids: Sequence[str]) -> set[str]:
        return {d for d in dict.fromkeys(document_ids) if await self._listed(bank_id, d)}

    async def get_document(self, bank_id: str, document_id: str) -> Document:
        held = await self._listed(bank_id, document_id)
        if not held:
            raise BackendRejected(404, {"detail": f"Document '{document_id}' not found"})
        return _document(document_id, held)

    async def get_config(self, bank_id: str) -> BankConfig:
        raise _unsupported("Mem0 has no per-bank configuration to read, change or reset")

    async def patch_config(self, bank_id: str, updates: Mapping[str, Any]) -> BankConfig:
        raise _unsupported("Mem0 has no per-bank configuration to read, change or reset")

    async def reset_config(self, bank_id: str) -> BankConfig:
        raise _unsupported("Mem0 has no per-bank configuration to read, change or reset")

    async def stats(self, bank_id: str, *, refresh: bool = False) -> BankStats:
        found = await self._listed(bank_id)
        documents = {m.document_id for m in found if m.document_id is not None}
        written = max((m.extra.get("mem0", {}).get("updated_at") or "" for m in found), default="") or None
        raw = {  # Hindsight's BankStatsResponse, as far as Mem0 can fill it (no graph, no observations)
            "bank_id": bank_id,
            "total_nodes": len(found),
            "total_links": 0,
            "total_documents": len(documents),
            "nodes_by_fact_type": {"world": len(found)},
            "links_by_link_type": {"temporal": 0, "semantic": 0, "entity": 0},
            "links_by_fact_type": {},
            "links_breakdown": {},
            "pending_operations": 0,
            "failed_operations": 0,
            "operations_by_status": {},
            "last_consolidated_at": None,
            "last_memory_write_at": written,
            "pending_consolidation": 0,
            "failed_consolidation": 0,
            "total_observations": 0,
            "mem0_listed_all": len(found) < MAX_LISTED,  # False: Mem0 lists 1,000 at most; more may exist
        }
        return BankStats(counts={"world": len(found), "documents": len(documents)}, raw=raw)

    async def erase_bank(self, bank_id: str) -> None:
        """Every memory of the bank out of Mem0's vector store (``DELETE /memories?<entity>=``)."""
        await self._call("DELETE", "/memories", params=self._scope(bank_id))


def _with_tags(item: Item, more: Sequence[str]) -> Item:
    from dataclasses import replace

    return replace(item, tags=tuple(dict.fromkeys([*item.tags, *more])))


def _document(document_id: str, held: Sequence[Memory]) -> Document:
    tags = tuple(dict.fromkeys(t for m in held for t in m.tags))
    text = "\n".join(m.text for m in held)
    created = min((m.mentioned_at for m in held if m.mentioned_at), default=None)
    return Document(
        id=document_id,
        tags=tags,
        memory_count=len(held),
        extra={"original_text": text, "created_at": created, "retain_params": {}},
    )
