"""The Mem0 backend: memwarden in front of Mem0's open-source REST server
(``--upstream mem0+http://host:port``) or its hosted platform (``mem0-platform+https://…``), in
neutral types (``backends/mem0_json.py`` translates, ``backends/mem0_wire.py`` speaks each dialect).

What it maps, and how (the reasons are in ``docs/guides/mem0-backend.md``):

* **bank** → a Mem0 entity id (``user_id`` unless ``backends.mem0.entity`` says ``agent_id``);
* **retain** → one Mem0 add per item, ``infer: false`` (verbatim: memwarden judged and
  deduplicated it) unless the bank is one of ``extract_banks`` (Mem0's own extraction runs on what
  memwarden kept). A document is a Mem0 run: retaining a document again **replaces** it, as
  Hindsight does — its memories are listed by ``run_id`` first and deleted, unless they already
  are the item verbatim (a delivery that landed and whose answer was lost: nothing is stored
  twice, the outbox's redelivery included);
* **recall** → Mem0's search in the bank, ``threshold: 0``, tag filters applied here on what
  Mem0 returns (Mem0 has no tags; its metadata filters differ by vector store, and some drop
  them silently), the answer cut to the token budget;
* **list, get, documents, stats** → Mem0's listing by entity (and run), a memory by its id;
  Mem0 lists at most 1,000 memories per call, so a bank past that is listed and counted up to it
  (``Page.total`` is then None: not known);
* **delete a document** → each of its run's memories deleted.

What Mem0 cannot do is declared, not pretended: no per-bank config (no ``CONFIG_GUARD``: the
config routes answer 501), no memory states (``set_memory_state`` → 501), no operations to poll
(a retain answers once Mem0 holds it; the platform's asynchronous add is polled until then).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import httpx

from memwarden.backends import mem0_json as mj
from memwarden.backends.base import (
    DOCUMENTS,
    TAG_GROUPS,
    BackendHealth,
    BackendRejected,
    BackendUnavailable,
)
from memwarden.backends.hindsight_models import check_new_bank_id
from memwarden.backends.mem0_wire import MAX_LISTED, wire
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

CHARS_PER_TOKEN = 4  # a recall's budget, counted as Hindsight's clients expect it: ~4 characters a token
DEFAULT_RECALL_TOKENS = 4096


def _unsupported(what: str) -> BackendRejected:
    return BackendRejected(501, {"detail": f"memwarden in front of Mem0: {what}"})


class Mem0Backend:
    """Adapter for Mem0 (``dialect``: ``rest``, the open-source server; ``platform``, the hosted
    API). ``client`` is owned by the caller."""

    kind = "mem0"
    capabilities = frozenset({DOCUMENTS, TAG_GROUPS})

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        api_key: str | None = None,
        dialect: str = "rest",
        entity: str = "user_id",
        extract_banks: Sequence[str] = (),
        event_timeout: float = 30.0,
    ) -> None:
        self._wire = wire(dialect, client, base_url, api_key, event_timeout=event_timeout)
        self.base_url = self._wire.http.base_url
        self.dialect = dialect
        self._entity = entity
        self._extract = frozenset(extract_banks)

    @property
    def metrics(self) -> Metrics | None:
        return self._wire.http.metrics

    @metrics.setter
    def metrics(self, value: Metrics | None) -> None:
        self._wire.http.metrics = value

    def _scope(self, bank: str, document_id: str | None = None) -> dict[str, str]:
        scope = {self._entity: mj.entity_id(bank)}
        if document_id is not None:
            scope["run_id"] = mj.entity_id(document_id)
        return scope

    async def _listed(self, bank: str, document_id: str | None = None) -> list[Memory]:
        found = [mj.memory_from_json(m) for m in await self._wire.listed(self._scope(bank, document_id))]
        if document_id is not None:  # a digest-named run: only its own document's memories
            found = [m for m in found if m.document_id == document_id]
        return found

    # -- the protocol -----------------------------------------------------------------------

    async def health(self) -> BackendHealth:
        start = time.perf_counter()
        try:
            await self._wire.probe()
        except BackendUnavailable as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=str(exc))
        except BackendRejected as exc:
            return BackendHealth(kind=self.kind, healthy=False, detail=f"Mem0 answered {exc.status}")
        latency = (time.perf_counter() - start) * 1000
        extra = {"url": self.base_url, "dialect": self.dialect}
        return BackendHealth(kind=self.kind, healthy=True, detail="healthy", latency_ms=round(latency, 2), extra=extra)

    async def retain(
        self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str] = (), wait: bool = True
    ) -> Receipt:
        try:
            check_new_bank_id(bank_id)  # Mem0 keeps no banks: a write may create one, as Hindsight checks it
        except ValueError as exc:
            raise BackendRejected(400, {"detail": str(exc)}) from None
        infer = bank_id in self._extract
        # A document's items together are the document (a batch may share one document id): each
        # document is looked up once, kept when Mem0 holds exactly its items already, else replaced.
        documents: dict[str | None, list[Item]] = {}
        for item in items:
            documents.setdefault(item.document_id, []).append(_with_tags(item, document_tags))
        stored = 0
        for document_id, group in documents.items():
            key = f"{bank_id}\x00{document_id}"
            await self._wire.settle(key)
            # ``update_mode: "append"`` on every item: added to the document, as Hindsight appends.
            appending = all(item.extra.get("update_mode") == "append" for item in group)
            parts = len(group)
            if document_id is not None:
                held = await self._listed(bank_id, document_id)
                if appending:
                    if not infer and mj.holds_items(held, group):  # an append that landed already
                        stored += len(group)
                        continue
                    parts += len(held)  # the document's memories after it (mj.whole counts the newest)
                else:
                    if not infer and mj.same_items(held, group):
                        stored += len(group)
                        continue
                    for old in held:  # the document retained again: replaced, as Hindsight replaces it
                        await self._delete(old.id)
            for item in group:
                body = mj.add_json(self._entity, bank_id, item, infer=infer, parts=parts)
                made = await self._wire.add(body, key)
                stored += 1 if not infer else len(made)
        return Receipt(items=stored)

    async def _delete(self, memory_id: str) -> None:
        try:
            await self._wire.delete(memory_id)
        except BackendRejected as exc:
            if exc.status != 404:  # gone already: what was asked
                raise

    async def recall(self, bank_id: str, query: RecallQuery) -> Recalled:
        budget = (query.max_tokens or DEFAULT_RECALL_TOKENS) * CHARS_PER_TOKEN
        predicate = tagfilter.build(query.tags.tags, query.tags.match or "any", query.tags.groups)
        found = await self._wire.search(query.text, self._scope(bank_id), MAX_LISTED if predicate else 100)
        hits = [mj.memory_from_json(m) for m in found]
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
        complete = len(found) < MAX_LISTED  # Mem0 lists 1,000 at most: past that, the total is unknown
        predicate = tagfilter.build(query.tags.tags, query.tags.match or "any", query.tags.groups)
        if predicate is not None:
            found = [m for m in found if predicate(frozenset(m.tags))]
        total = len(found) if complete else None
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
            found = await self._wire.get(memory_id)
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
        """The documents Mem0 holds whole: every item of each (a write cut between two of a
        document's adds is not held, and is delivered again). In an extract bank none is: Mem0 made
        facts, not the items, so a document is delivered again and replaced — never doubled."""
        if bank_id in self._extract:
            return set()
        return {d for d in dict.fromkeys(document_ids) if mj.whole(await self._listed(bank_id, d))}

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
        """Every memory of the bank out of Mem0's vector store (its delete-all by entity)."""
        await self._wire.delete_all(self._scope(bank_id))


def _with_tags(item: Item, more: Sequence[str]) -> Item:
    return replace(item, tags=tuple(dict.fromkeys([*item.tags, *more]))) if more else item


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
